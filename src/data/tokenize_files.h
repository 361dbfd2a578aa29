// `gpudays data tokenize`: documents from text files tokenized into a Megatron-LM dataset, one
// sequence per document ending in the end-of-document token. A file ending in .jsonl holds one
// document per line (its "text" field, as Megatron-LM's preprocessing reads); any other file is
// one document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudays::data {

struct TokenizeOptions {
  std::string tokenizer_path;       // tokenizer.json
  std::vector<std::string> inputs;  // text or .jsonl files
  std::string out_prefix;           // writes PREFIX.bin and PREFIX.idx
  std::string eod_token = "<|endoftext|>";
};

struct TokenizeSummary {
  int64_t documents = 0;
  int64_t tokens = 0;
  int64_t text_bytes = 0;
  std::string dtype;
  double seconds = 0.0;  // tokenizing and writing, the tokenizer's loading excluded
};

// Throws InputError for an unreadable or malformed input (naming the file, and the line or byte
// offset), EnvironmentError when the output cannot be written.
TokenizeSummary tokenize_files(const TokenizeOptions& options);

}  // namespace gpudays::data
