// The BPE model of a tokenizer.json: a word starts as one symbol per byte (their characters in the
// byte alphabet, for a ByteLevel pre-tokenizer) or per character (SentencePiece-style files, where
// a character the vocabulary lacks becomes its UTF-8 bytes' <0xXX> tokens with byte fallback, else
// the unknown token), and symbols are merged pair by pair, the lowest-ranked merge first and,
// among equal ranks, the leftmost (as HuggingFace tokenizers does). Words already seen come from a
// cache; an instance is therefore not for use from several threads at once.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpudays::data {

struct BpeModelOptions {
  std::unordered_map<std::string, int32_t> vocab;           // token -> id
  std::vector<std::pair<std::string, std::string>> merges;  // by rank, lowest first
  int32_t unk_id = -1;         // for a symbol not in the vocabulary; -1 drops it
  bool fuse_unk = false;       // a run of unknown symbols gives one unk_id
  bool ignore_merges = false;  // a word that is a whole token is that token
  bool byte_level = true;      // symbols are bytes in the byte alphabet, else characters
  bool byte_fallback = false;  // characters only: an unknown one becomes its bytes' <0xXX> tokens
};

class BpeModel {
 public:
  // Throws InputError when a merge names a token the vocabulary lacks, or byte_fallback has no
  // <0xXX> token for a byte.
  explicit BpeModel(BpeModelOptions options);

  // Appends the ids of word `bytes` (one pre-tokenized word, raw bytes) to ids.
  void encode_word(std::string_view bytes, std::vector<int64_t>& ids) const;
  const std::unordered_map<std::string, int32_t>& vocab() const { return options_.vocab; }
  // The characters of `ascii_lefts` after which a word may be cut before the character `right`
  // (UTF-8) with the word's ids those of the two halves concatenated, whatever else the word
  // holds: no merge can ever join the halves' facing symbols. Empty for byte-level models and with
  // ignore_merges (a whole-word token may span the cut); a character that is unknown (no token,
  // no byte fallback) is never one (its <unk> may fuse with the next).
  std::string lefts_never_joined(std::string_view ascii_lefts, std::string_view right) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  void initial_symbols(std::string_view bytes, std::vector<int32_t>& id) const;
  // The initial symbols of one character (UTF-8); empty when it is unknown.
  std::vector<int32_t> known_symbols(std::string_view character) const;
  void merge_word(std::string_view bytes, std::vector<int32_t>& out) const;
  const Merge* find_merge(int32_t left, int32_t right) const;

  BpeModelOptions options_;
  std::array<int32_t, 256> byte_ids_{};  // byte level: the byte's character; else its <0xXX>
  std::array<std::string, 256> alphabet_;
  std::unordered_map<char32_t, int32_t> char_ids_;  // characters: the one-character tokens
  std::unordered_map<uint64_t, Merge> merges_;      // (left << 32 | right) -> merge
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace gpudays::data
