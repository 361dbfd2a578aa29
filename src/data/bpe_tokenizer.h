// A byte-level BPE tokenizer read from a HuggingFace tokenizer.json (the format of the
// GPT-NeoX/Pythia tokenizer): added and special tokens, the normalizer (NFC, NFD, NFKC, NFKD or
// a sequence of them), the ByteLevel pre-tokenizer and the BPE model. encode() gives the ids
// HuggingFace's Tokenizer.encode(text, add_special_tokens=False) gives; anything in a file that
// would make them differ (dropout, byte fallback, other normalizers or pre-tokenizers, single-word
// added tokens) is refused with an InputError naming it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_model.h"
#include "data/unicode_text.h"

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

struct TokenizerSettings {
  std::vector<NormalForm> normal_forms;  // applied in order
  bool add_prefix_space = false;
  bool use_regex = true;
  std::vector<AddedToken> added_tokens;
};

class BpeTokenizer {
 public:
  // Throws InputError naming `path` and what is wrong or unsupported.
  static BpeTokenizer load(const std::string& path);
  BpeTokenizer(TokenizerSettings settings, BpeModelOptions model);

  // Appends the ids of `text` (well-formed UTF-8) to ids.
  void encode(std::string_view text, std::vector<int64_t>& ids) const;
  // The id of a token of the vocabulary or an added token.
  std::optional<int64_t> token_id(const std::string& token) const;
  int64_t vocab_size() const;  // the largest id + 1

 private:
  // Splits `text` on added tokens of one kind (raw or normalized); the rest goes to `next`.
  template <typename Next>
  void split_added(std::string_view text,
                   bool normalized,
                   std::vector<int64_t>& ids,
                   Next&& next) const;
  void encode_normalized(std::string_view text, std::vector<int64_t>& ids) const;
  void encode_words(std::string_view text, std::vector<int64_t>& ids) const;

  TokenizerSettings settings_;
  std::shared_ptr<BpeModel> model_;
  std::vector<std::vector<size_t>> added_by_first_byte_;  // indices, longest first
};

}  // namespace gpudays::data
