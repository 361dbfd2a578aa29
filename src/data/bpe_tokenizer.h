// A BPE tokenizer read from a HuggingFace tokenizer.json, in the kinds GPT-style and Llama-style
// models ship: byte-level BPE (ByteLevel with GPT-2's split: GPT-NeoX/Pythia, RoBERTa; a Split
// with Llama-3's or Qwen2's pattern before ByteLevel) and SentencePiece-style BPE with byte
// fallback (Llama-2, Mistral: Prepend and Replace normalizers, or the Metaspace pre-tokenizer).
// It holds added and special tokens, the normalizer (normalizer.h), the pre-tokenizer and the
// BPE model. encode() gives the ids HuggingFace's Tokenizer.encode(text, add_special_tokens=False)
// gives; anything in a file that would make them differ (dropout, other normalizers,
// pre-tokenizers or Split patterns, single-word added tokens, truncation) is refused with an
// InputError naming it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_model.h"
#include "data/normalizer.h"
#include "data/word_split.h"

namespace gpudays::data {

struct AddedToken {
  std::string content;  // normalized, when `normalized`
  int32_t id = 0;
  bool normalized = false;  // matched in the normalized text (else in the raw text)
  bool special = false;
  // A match also takes the whitespace (the White_Space property) before it (lstrip) or after it
  // (rstrip), as HuggingFace's AddedVocabulary::find_matches does: RoBERTa's <mask> has lstrip.
  bool lstrip = false;
  bool rstrip = false;
};

// The Metaspace pre-tokenizer: each space becomes `replacement`, which is also put before a piece
// that does not start with it (always, only before the text's first piece, or never) and, with
// `split`, starts a new word at each occurrence.
struct Metaspace {
  enum class Prepend { kAlways, kFirst, kNever };
  std::string replacement = "\u2581";  // ▁
  Prepend prepend = Prepend::kAlways;
  bool split = true;
};

struct TokenizerSettings {
  std::vector<NormalizerStep> normalizer;  // applied in order
  // The pre-tokenizer: Metaspace when set; else ByteLevel's prefix space, then `split` (ByteLevel's
  // own GPT-2 split, or a Split pattern's; kNone without a pre-tokenizer).
  std::optional<Metaspace> metaspace;
  bool add_prefix_space = false;
  WordSplit split = WordSplit::kGpt2;
  std::vector<AddedToken> added_tokens;
};

class BpeTokenizer {
 public:
  // Throws InputError naming `path` and what is wrong or unsupported.
  static BpeTokenizer load(const std::string& path);
  BpeTokenizer(TokenizerSettings settings, BpeModelOptions model);

  // Appends the ids of `text` (well-formed UTF-8) to ids; `start` says whether it starts a text
  // or continues the piece cut before it (TextStart, data/normalizer.h).
  void encode(std::string_view text,
              std::vector<int64_t>& ids,
              TextStart start = TextStart::kStart) const;
  // Whether `text` may be cut at byte `at` into two pieces whose ids, concatenated (the second
  // encoded as a TextStart::kContinuation), are the ids of the whole, so that encode runs piece by
  // piece in bounded memory. `at` is a space after an ASCII letter or digit that the tokenizer
  // allows (computed once at load), with no added token over the cut in the ASCII around it:
  // - byte-level splits (GPT-2's, Llama-3's, Qwen2's): before an ASCII letter too, where every
  //   one starts a word; the normalizer holds only Unicode normal forms, which keep ASCII as it is.
  // - Metaspace with split: after any letter or digit (a word starts at each replacement).
  // - one word (Metaspace without split; no pre-tokenizer, as Llama-2's Prepend and Replace
  //   normalizers): after a character that no merge can ever join to what the space becomes
  //   (BpeModel::lefts_never_joined), when the normalizer keeps the cut exact.
  // Never for any other tokenizer: its documents are held whole.
  // `text` must start where a piece starts. A cut within cut_lookahead() bytes of the end of
  // `text` is not known yet (false).
  bool splits_at(std::string_view text, size_t at) const;
  size_t cut_lookahead() const { return longest_added_ + 2; }
  // The id of a token of the vocabulary or an added token.
  std::optional<int64_t> token_id(const std::string& token) const;
  int64_t vocab_size() const;  // the largest id + 1

 private:
  // Splits `text` on added tokens of one kind (raw or normalized); each piece between them goes
  // to `next` with its byte offset in `text`.
  template <typename Next>
  void split_added(std::string_view text,
                   bool normalized,
                   std::vector<int64_t>& ids,
                   Next&& next) const;
  // `first`: the piece starts the text (Metaspace's prepend scheme "first").
  void encode_normalized(std::string_view text, bool first, std::vector<int64_t>& ids) const;
  void pre_tokenize(std::string_view piece, bool first, std::vector<int64_t>& ids) const;
  void encode_metaspace(std::string_view piece, bool first, std::vector<int64_t>& ids) const;
  void encode_words(std::string_view text, std::vector<int64_t>& ids) const;
  // Whether an added token lies over the cut at `at`, in the ASCII window [lo, hi) of `text`.
  bool added_token_over(std::string_view text, size_t at, size_t lo, size_t hi) const;

  TokenizerSettings settings_;
  std::shared_ptr<BpeModel> model_;
  std::vector<std::vector<size_t>> added_by_first_byte_;  // indices, longest first
  std::array<bool, 128> cut_after_{};    // ASCII characters a cut before a space may follow
  bool cut_before_letter_only_ = false;  // and only if an ASCII letter follows the space
  size_t longest_added_ = 0;             // bytes of the longest added token
};

}  // namespace gpudays::data
