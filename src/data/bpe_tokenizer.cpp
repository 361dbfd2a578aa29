// BpeTokenizer's pipeline, in HuggingFace's order: split on raw added tokens, normalize the rest,
// split on normalized added tokens, then pre-tokenize (ByteLevel, Split, Metaspace) and merge
// (BPE) each piece.
#include "data/bpe_tokenizer.h"

#include <algorithm>

namespace gpudays::data {
namespace {

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_white_space(char32_t code_point) {
  return char_class(code_point) == CharClass::kSpace;
}

// The start of the run of whitespace that ends at `end`, not before `floor` (the previous match).
size_t whitespace_before(std::string_view text, size_t floor, size_t end) {
  size_t start = end;
  while (start > floor) {
    size_t lead = start - 1;  // back to the lead byte of the previous code point
    while (lead > floor && (static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) --lead;
    char32_t code_point = 0;
    decode_utf8(text, lead, code_point);
    if (!is_white_space(code_point)) break;
    start = lead;
  }
  return start;
}

// The end of the run of whitespace that starts at `begin`.
size_t whitespace_after(std::string_view text, size_t begin) {
  size_t stop = begin;
  while (stop < text.size()) {
    char32_t code_point = 0;
    const int length = decode_utf8(text, stop, code_point);
    if (!is_white_space(code_point)) break;
    stop += static_cast<size_t>(length);
  }
  return stop;
}

bool is_normal_form(const NormalizerStep& step) {
  return step.kind == NormalizerStep::Kind::kNormalForm;
}

// Whether the normalizer gives a text cut before a space (between ASCII characters) as its two
// pieces, the second without Prepend: Prepend (at the text's start only), Replace of " " (one
// character: whatever the cut, the same occurrences) and normal forms before any Replace (a space
// starts a normalization segment in each; after a Replace, what the space became might not).
bool keeps_cut_exact(const std::vector<NormalizerStep>& steps) {
  bool replaced = false;
  for (const NormalizerStep& step : steps) {
    if (step.kind == NormalizerStep::Kind::kReplace && (step.text != " " || step.content.empty()))
      return false;
    if (is_normal_form(step) && replaced) return false;
    replaced = replaced || step.kind == NormalizerStep::Kind::kReplace;
  }
  return true;
}

// The first character (UTF-8) of `text`, which is not empty.
std::string_view first_character(std::string_view text) {
  char32_t code_point = 0;
  return text.substr(0, static_cast<size_t>(decode_utf8(text, 0, code_point)));
}

// The ASCII letters and digits a cut before a space may follow (BpeTokenizer::splits_at).
std::string cut_after_characters(const TokenizerSettings& settings, const BpeModel& model) {
  const std::string alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const bool normal_forms_only =
      std::all_of(settings.normalizer.begin(), settings.normalizer.end(), is_normal_form);
  if (settings.metaspace) {
    if (!normal_forms_only) return "";
    if (settings.metaspace->split) return alnum;
    return model.lefts_never_joined(alnum, settings.metaspace->replacement);
  }
  if (settings.split != WordSplit::kNone) return normal_forms_only ? alnum : "";
  if (!keeps_cut_exact(settings.normalizer)) return "";
  // One word: the space becomes what the normalizer makes of it (Llama-2's "▁").
  const std::string space = apply_normalizer(settings.normalizer, " ", TextStart::kContinuation);
  return model.lefts_never_joined(alnum, first_character(space));
}

}  // namespace

BpeTokenizer::BpeTokenizer(TokenizerSettings settings, BpeModelOptions model)
    : settings_(std::move(settings)),
      model_(std::make_shared<BpeModel>(std::move(model))),
      added_by_first_byte_(256) {
  char_class(0);  // builds the class table now, not inside the first encode
  for (AddedToken& token : settings_.added_tokens)
    if (token.normalized) token.content = apply_normalizer(settings_.normalizer, token.content);
  const auto& tokens = settings_.added_tokens;
  for (size_t t = 0; t < tokens.size(); ++t)
    if (!tokens[t].content.empty())
      added_by_first_byte_[static_cast<unsigned char>(tokens[t].content[0])].push_back(t);
  for (auto& bucket : added_by_first_byte_)
    std::stable_sort(bucket.begin(), bucket.end(), [&](size_t a, size_t b) {
      return tokens[a].content.size() > tokens[b].content.size();
    });
  for (const AddedToken& token : tokens)
    longest_added_ = std::max(longest_added_, token.content.size());
  for (const char c : cut_after_characters(settings_, *model_))
    cut_after_[static_cast<unsigned char>(c)] = true;
  cut_before_letter_only_ = !settings_.metaspace && settings_.split != WordSplit::kNone;
}

bool BpeTokenizer::splits_at(std::string_view text, size_t at) const {
  const auto before = static_cast<unsigned char>(at > 0 ? text[at - 1] : 0);
  if (at == 0 || at + 1 >= text.size() || text[at] != ' ' || before >= 0x80 ||
      !cut_after_[before] || (cut_before_letter_only_ && !is_ascii_letter(text[at + 1]))) {
    return false;
  }
  // A match that covers byte at - 1 or at (or, taking the whitespace after it, ends at `at`) lies
  // in [at - L, at + L) (L the longest); one byte more each side keeps a combining mark beyond it
  // from changing what normalizes there.
  const size_t reach = longest_added_ + 1;
  const size_t lo = at > reach ? at - reach : 0;  // text[0] starts a piece: nothing covers it
  const size_t hi = at + reach + 1;
  if (hi > text.size()) return false;  // not yet known
  for (size_t i = lo; i < hi; ++i)
    if (static_cast<unsigned char>(text[i]) >= 0x80) return false;
  return !added_token_over(text, at, lo, hi);
}

bool BpeTokenizer::added_token_over(std::string_view text, size_t at, size_t lo, size_t hi) const {
  const bool ascii_kept =  // normal forms keep ASCII as it is; a Replace may not
      std::all_of(settings_.normalizer.begin(), settings_.normalizer.end(), is_normal_form);
  std::string normal;  // the window normalized, when ASCII is not kept
  for (const AddedToken& token : settings_.added_tokens) {
    const size_t n = token.content.size();
    if (n == 0) continue;
    if (token.normalized && !ascii_kept) {
      // Matched in the normalized text: anywhere in the window's (each ASCII byte there gives at
      // least one byte, so a match over the cut lies in it).
      if (normal.empty())
        normal = apply_normalizer(
            settings_.normalizer, text.substr(lo, hi - lo), TextStart::kContinuation);
      if (normal.find(token.content) != std::string::npos) return true;
      continue;
    }
    const size_t first = at >= n + lo ? at - n : lo;  // a match from here on covers at - 1 or at
    for (size_t start = first; start <= at && start + n <= hi; ++start)
      if (text.compare(start, n, token.content) == 0) return true;
  }
  return false;
}

template <typename Next>
void BpeTokenizer::split_added(std::string_view text,
                               bool normalized,
                               std::vector<int64_t>& ids,
                               Next&& next) const {
  size_t piece_start = 0;
  for (size_t at = 0; at < text.size();) {
    const AddedToken* match = nullptr;  // leftmost, then longest
    for (const size_t t : added_by_first_byte_[static_cast<unsigned char>(text[at])]) {
      const AddedToken& token = settings_.added_tokens[t];
      if (token.normalized == normalized &&
          text.compare(at, token.content.size(), token.content) == 0) {
        match = &token;
        break;
      }
    }
    if (match == nullptr) {
      ++at;
      continue;
    }
    size_t start = at, stop = at + match->content.size();
    if (match->lstrip) start = whitespace_before(text, piece_start, start);
    if (match->rstrip) stop = whitespace_after(text, stop);
    if (start > piece_start) next(text.substr(piece_start, start - piece_start), piece_start);
    ids.push_back(match->id);
    at = stop;
    piece_start = at;
  }
  if (piece_start < text.size()) next(text.substr(piece_start), piece_start);
}

// A continuation's first part is neither the text's first piece (Metaspace's "first") nor a
// piece's start (Prepend); the parts after its added tokens are pieces' starts as in a whole text.
void BpeTokenizer::encode(std::string_view text, std::vector<int64_t>& ids, TextStart start) const {
  split_added(text, /*normalized=*/false, ids, [&](std::string_view piece, size_t offset) {
    const TextStart piece_start = offset == 0 ? start : TextStart::kStart;
    const bool first = offset == 0 && start == TextStart::kStart;
    if (settings_.normalizer.empty()) return encode_normalized(piece, first, ids);
    const std::string normal = apply_normalizer(settings_.normalizer, piece, piece_start);
    if (!normal.empty()) encode_normalized(normal, first, ids);
  });
}

void BpeTokenizer::encode_normalized(std::string_view text,
                                     bool first,
                                     std::vector<int64_t>& ids) const {
  split_added(text, /*normalized=*/true, ids, [&](std::string_view piece, size_t offset) {
    pre_tokenize(piece, first && offset == 0, ids);
  });
}

void BpeTokenizer::pre_tokenize(std::string_view piece,
                                bool first,
                                std::vector<int64_t>& ids) const {
  if (settings_.metaspace) return encode_metaspace(piece, first, ids);
  if (!settings_.add_prefix_space || piece.front() == ' ') return encode_words(piece, ids);
  std::string spaced(1, ' ');
  spaced.append(piece);
  encode_words(spaced, ids);
}

// As tokenizers' Metaspace::pre_tokenize: spaces replaced, the replacement prepended per the
// scheme unless the piece starts with it, then (with split) a word starts at each replacement.
void BpeTokenizer::encode_metaspace(std::string_view piece,
                                    bool first,
                                    std::vector<int64_t>& ids) const {
  const Metaspace& meta = *settings_.metaspace;
  const std::string_view mark = meta.replacement;
  std::string text;
  const bool prepend = meta.prepend == Metaspace::Prepend::kAlways ||
                       (meta.prepend == Metaspace::Prepend::kFirst && first);
  if (prepend && piece.substr(0, 1) != " " && piece.substr(0, mark.size()) != mark) text = mark;
  for (const char c : piece) {
    if (c == ' ')
      text.append(mark);
    else
      text.push_back(c);
  }
  if (!meta.split) return model_->encode_word(text, ids);
  const std::string_view all = text;
  size_t start = 0;
  for (size_t at = all.find(mark, 1); at != std::string_view::npos; at = all.find(mark, at + 1)) {
    model_->encode_word(all.substr(start, at - start), ids);
    start = at;
  }
  model_->encode_word(all.substr(start), ids);
}

void BpeTokenizer::encode_words(std::string_view text, std::vector<int64_t>& ids) const {
  if (settings_.split == WordSplit::kNone) return model_->encode_word(text, ids);
  thread_local std::vector<ByteSpan> words;
  words.clear();
  split_words(settings_.split, text, words);
  for (const ByteSpan& word : words)
    model_->encode_word(text.substr(word.begin, word.end - word.begin), ids);
}

std::optional<int64_t> BpeTokenizer::token_id(const std::string& token) const {
  for (const AddedToken& added : settings_.added_tokens)
    if (added.content == token) return added.id;
  const auto found = model_->vocab().find(token);
  if (found == model_->vocab().end()) return std::nullopt;
  return found->second;
}

int64_t BpeTokenizer::vocab_size() const {
  int64_t largest = -1;
  for (const auto& [token, id] : model_->vocab()) largest = std::max<int64_t>(largest, id);
  for (const AddedToken& added : settings_.added_tokens)
    largest = std::max<int64_t>(largest, added.id);
  return largest + 1;
}

}  // namespace gpudays::data
