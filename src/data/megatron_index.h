// The Megatron-LM indexed dataset (PREFIX.bin + PREFIX.idx), the format the Pythia training data
// is published in: parsing and validating the index, and writing both files. Layout of the .idx
// (little-endian; Megatron-LM megatron/core/datasets/indexed_dataset.py, _IndexWriter):
//   offset 0   9 bytes  magic "MMIDIDX\0\0"
//   offset 9   u64      version (1)
//   offset 17  u8       dtype code (1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64,
//                       7 float32, 8 uint16)
//   offset 18  u64      sequence count N
//   offset 26  u64      document count D (document indices, the leading 0 included)
//   offset 34  i32[N]   sequence lengths (tokens), then i64[N] byte offsets of each sequence in
//                       the .bin, then i64[D] document indices (sequence index where each
//                       document starts; the last equals N), then optionally i8[N] modes.
// The .bin holds the tokens of every sequence back to back in the dtype.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/output_files.h"

namespace gpudays::data {

// A token dtype of the format (the float codes are not token types and are refused).
struct TokenDtype {
  uint8_t code = 8;
  const char* name = "uint16";
  int64_t item_bytes = 2;
  bool is_signed = false;
  int64_t vocab_limit = 65536;  // every id it can hold is below this

  bool operator==(const TokenDtype& other) const { return code == other.code; }
};

// Throws InputError naming `path` and `offset` (of the code) for an unknown or non-token code.
TokenDtype token_dtype_from_code(uint8_t code, const std::string& path, int64_t offset);
// The smallest unsigned dtype Megatron-LM uses for a vocabulary: uint16 below 65536, else int32.
TokenDtype token_dtype_for_vocab(int64_t vocab_size);

inline constexpr int64_t kIndexHeaderBytes = 34;

struct MegatronIndex {
  TokenDtype dtype;
  std::vector<int32_t> sequence_lengths;   // tokens per sequence
  std::vector<int64_t> sequence_pointers;  // byte offset of each sequence in the .bin
  std::vector<int64_t> document_indices;   // [0, ..., N]
};

// Parses and validates an index (magic, version, dtype, counts against the file size, lengths,
// document indices), then checks every sequence lies inside a .bin of `bin_bytes` bytes. Every
// error is an InputError naming the file and the byte offset.
MegatronIndex parse_megatron_index(const uint8_t* idx,
                                   int64_t idx_bytes,
                                   const std::string& idx_path,
                                   int64_t bin_bytes,
                                   const std::string& bin_path);

// Writes PREFIX.bin and PREFIX.idx, one sequence per document (as Megatron-LM's preprocessing
// does), in `dtype`. Throws EnvironmentError when a file cannot be written and InputError for a
// token the dtype cannot hold.
// Writes PREFIX.bin and PREFIX.idx atomically: both grow beside their final names and are renamed
// over them by finish() (the .bin first, then the .idx that describes it); a writer destroyed
// before finish() (an error, an interrupt) leaves any earlier files of that prefix as they were.
class MegatronWriter {
 public:
  MegatronWriter(const std::string& prefix, TokenDtype dtype);  // throws IoError
  MegatronWriter(const MegatronWriter&) = delete;
  MegatronWriter& operator=(const MegatronWriter&) = delete;

  void add_document(const std::vector<int64_t>& tokens);  // add_tokens, then end_document
  // A document in pieces: its tokens as they come, then its end (a document of any length is
  // written without being held).
  void add_tokens(const std::vector<int64_t>& tokens);
  void end_document();
  void finish();  // writes the index and renames both; the files exist only after it
  int64_t documents() const { return static_cast<int64_t>(sequence_lengths_.size()); }
  int64_t tokens() const { return tokens_; }

 private:
  void flush_pending();

  std::string prefix_;
  TokenDtype dtype_;
  std::unique_ptr<AtomicFile> bin_;
  std::vector<int32_t> sequence_lengths_;
  std::vector<uint8_t> pending_;  // encoded tokens not yet written (written in 1 MiB pieces)
  int64_t tokens_ = 0;
  int64_t document_tokens_ = 0;  // of the document not yet ended
};

}  // namespace gpudays::data
