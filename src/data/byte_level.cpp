// GPT-2's word split, written as a scanner over code points that follows the pattern's
// alternatives in order (see byte_level.h), and its byte alphabet.
#include "data/byte_level.h"

#include "data/unicode_text.h"

namespace gpudays::data {
namespace {

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

// The contraction ('s 't 're 've 'm 'll 'd) at i: its length in code points, or 0.
size_t contraction(const Scan& scan, size_t i) {
  const size_t n = scan.points.size();
  if (scan.points[i] != U'\'' || i + 1 >= n) return 0;
  const char32_t a = scan.points[i + 1];
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (i + 2 >= n) return 0;
  const char32_t b = scan.points[i + 2];
  if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  return 0;
}

// The end of the word starting at i (in code points).
size_t word_end(const Scan& scan, size_t i) {
  const size_t n = scan.points.size();
  if (const size_t length = contraction(scan, i)) return i + length;
  const size_t j = (scan.points[i] == U' ' && i + 1 < n) ? i + 1 : i;
  const CharClass kind = scan.classes[j];
  if (kind != CharClass::kSpace) {  // ` ?\p{L}+`, ` ?\p{N}+` or ` ?[^\s\p{L}\p{N}]+`
    size_t end = j + 1;
    while (end < n && scan.classes[end] == kind) ++end;
    return end;
  }
  size_t end = i + 1;  // whitespace: `\s+(?!\S)`, else `\s+`
  while (end < n && scan.classes[end] == CharClass::kSpace) ++end;
  if (end == n || end - 1 == i) return end;
  return end - 1;  // leave the last space to the word after it
}

}  // namespace

void split_gpt2_words(std::string_view text, std::vector<ByteSpan>& words) {
  thread_local Scan scan;
  decode(text, scan);
  const size_t n = scan.points.size();
  for (size_t i = 0; i < n;) {
    const size_t end = word_end(scan, i);
    words.push_back({scan.offsets[i], scan.offsets[end]});
    i = end;
  }
}

std::array<std::string, 256> byte_level_alphabet() {
  std::array<std::string, 256> alphabet;
  char32_t next_extra = 0x100;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                           (byte >= 0xAE && byte <= 0xFF);
    const char32_t c = printable ? static_cast<char32_t>(byte) : next_extra++;
    std::string utf8;
    if (c < 0x80) {
      utf8.push_back(static_cast<char>(c));
    } else {  // every mapped character is below U+0800: two bytes
      utf8.push_back(static_cast<char>(0xC0 | (c >> 6)));
      utf8.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
    alphabet[byte] = utf8;
  }
  return alphabet;
}

}  // namespace gpudays::data
