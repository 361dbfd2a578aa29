// The word splits of word_split.h. Each scanner returns where the word that starts at a code point
// ends, trying its pattern's alternatives in the pattern's order (every code point starts a match,
// so the words follow one another with no gaps, as the regex's matches do).
#include "data/word_split.h"

#include <string>

#include "data/unicode_text.h"

namespace gpudays::data {
namespace {

// The patterns as tokenizer.json files write them (GPT-2's as tokenizers' ByteLevel and the
// transformers converters spell it; Llama-3's as Meta-Llama-3's tokenizer.json, cl100k_base's;
// Qwen2's as Qwen2's tokenizer.json).
constexpr std::string_view kGpt2Pattern =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kLlama3Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kQwen2Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

struct Scan {
  std::vector<CharClass> classes;  // one per code point
  std::vector<char32_t> points;
  std::vector<uint32_t> offsets;  // byte offset of each code point, then the text's size
};

void decode(std::string_view text, Scan& scan) {
  scan.classes.clear();
  scan.points.clear();
  scan.offsets.clear();
  size_t at = 0;
  while (at < text.size()) {
    char32_t c;
    const int length = decode_utf8(text, at, c);
    scan.points.push_back(c);
    scan.classes.push_back(char_class(c));
    scan.offsets.push_back(static_cast<uint32_t>(at));
    at += length;
  }
  scan.offsets.push_back(static_cast<uint32_t>(text.size()));
}

// The end of the run of code points of class `kind` that starts at i.
size_t run_end(const Scan& scan, size_t i, CharClass kind) {
  while (i < scan.classes.size() && scan.classes[i] == kind) ++i;
  return i;
}

bool is_newline(char32_t c) {
  return c == U'\r' || c == U'\n';
}

// A letter of a contraction as (?i:...) compares it: ASCII letters in either case, and U+017F
// LATIN SMALL LETTER LONG S, which case-folds to s (Oniguruma matches it; checked against
// `tokenizers` over every letter of Unicode).
char32_t fold(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c - U'A' + U'a';
  return c == U'\u017F' ? U's' : c;
}

// The contraction ('s 't 're 've 'm 'll 'd) at i: its length in code points, or 0.
size_t contraction(const Scan& scan, size_t i, bool any_case) {
  const size_t n = scan.points.size();
  if (scan.points[i] != U'\'' || i + 1 >= n) return 0;
  const auto letter = [&](size_t k) { return any_case ? fold(scan.points[k]) : scan.points[k]; };
  const char32_t a = letter(i + 1);
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (i + 2 >= n) return 0;
  const char32_t b = letter(i + 2);
  if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  return 0;
}

// Whitespace from i (which is whitespace): `\s+(?!\S)`, else `\s+`.
size_t whitespace_end(const Scan& scan, size_t i) {
  const size_t end = run_end(scan, i, CharClass::kSpace);
  if (end == scan.points.size() || end - 1 == i) return end;
  return end - 1;  // leave the last space to the word after it
}

// GPT-2's word at i (see word_split.h).
size_t gpt2_word_end(const Scan& scan, size_t i) {
  if (const size_t length = contraction(scan, i, /*any_case=*/false)) return i + length;
  const size_t j = (scan.points[i] == U' ' && i + 1 < scan.points.size()) ? i + 1 : i;
  const CharClass kind = scan.classes[j];
  if (kind != CharClass::kSpace) return run_end(scan, j + 1, kind);  // ` ?\p{L}+`, ...
  return whitespace_end(scan, i);
}

// Llama-3's or Qwen2's word at i: numbers are taken `max_digits` at most at a time.
size_t tiktoken_word_end(const Scan& scan, size_t i, size_t max_digits) {
  const size_t n = scan.points.size();
  const auto& classes = scan.classes;
  if (const size_t length = contraction(scan, i, /*any_case=*/true)) return i + length;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  const bool lead = classes[i] != CharClass::kLetter && classes[i] != CharClass::kNumber &&
                    !is_newline(scan.points[i]);
  const size_t letters = lead && i + 1 < n ? i + 1 : i;
  if (classes[letters] == CharClass::kLetter) return run_end(scan, letters, CharClass::kLetter);
  if (classes[i] == CharClass::kNumber) {  // \p{N}{1,3} or \p{N}
    size_t end = i + 1;
    while (end < n && end - i < max_digits && classes[end] == CharClass::kNumber) ++end;
    return end;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  const size_t j = (scan.points[i] == U' ' && i + 1 < n) ? i + 1 : i;
  if (classes[j] == CharClass::kOther) {
    size_t end = run_end(scan, j, CharClass::kOther);
    while (end < n && is_newline(scan.points[end])) ++end;
    return end;
  }
  // Whitespace: `\s*[\r\n]+` ends after the run's last newline; else `\s+(?!\S)`, else `\s+`.
  const size_t end = run_end(scan, i, CharClass::kSpace);
  for (size_t k = end; k > i; --k)
    if (is_newline(scan.points[k - 1])) return k;
  return whitespace_end(scan, i);
}

size_t word_end(WordSplit split, const Scan& scan, size_t i) {
  switch (split) {
    case WordSplit::kNone:
      return scan.points.size();
    case WordSplit::kGpt2:
      return gpt2_word_end(scan, i);
    case WordSplit::kLlama3:
      return tiktoken_word_end(scan, i, /*max_digits=*/3);
    case WordSplit::kQwen2:
      return tiktoken_word_end(scan, i, /*max_digits=*/1);
  }
  return scan.points.size();
}

}  // namespace

std::optional<WordSplit> word_split_of_pattern(std::string_view regex) {
  if (regex == kGpt2Pattern) return WordSplit::kGpt2;
  if (regex == kLlama3Pattern) return WordSplit::kLlama3;
  if (regex == kQwen2Pattern) return WordSplit::kQwen2;
  return std::nullopt;
}

void split_words(WordSplit split, std::string_view text, std::vector<ByteSpan>& words) {
  thread_local Scan scan;
  decode(text, scan);
  const size_t n = scan.points.size();
  for (size_t i = 0; i < n;) {
    const size_t end = word_end(split, scan, i);
    words.push_back({scan.offsets[i], scan.offsets[end]});
    i = end;
  }
}

}  // namespace gpudays::data
