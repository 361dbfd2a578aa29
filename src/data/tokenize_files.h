// `gpudays data tokenize`: documents from text files tokenized into a Megatron-LM dataset, one
// sequence per document ending in the end-of-document token. A file ending in .jsonl holds one
// document per line (its "text" field, as Megatron-LM's preprocessing reads), read line by line;
// any other file is one document, read a block at a time and tokenized in pieces cut where the
// tokenizer splits anyway (the ids those of the whole), so that memory does not grow with it.
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
  size_t read_bytes = size_t{1} << 20;  // a one-document file is read this much at a time
  // The most text of one document held at once: a stretch of a file with no place to cut, or a
  // .jsonl line. Tokenizing holds about 20 bytes per byte of it; longer is an InputError.
  size_t max_held_bytes = size_t{64} << 20;
};

struct TokenizeSummary {
  int64_t documents = 0;
  int64_t tokens = 0;
  int64_t text_bytes = 0;
  int64_t held_bytes_max = 0;  // the most text of one document held at once
  std::string dtype;
  double seconds = 0.0;  // tokenizing and writing, the tokenizer's loading excluded
};

// Throws InputError for an unreadable or malformed input (naming the file, and the line or byte
// offset), for inputs without any text, for a document longer than max_held_bytes that cannot be
// cut, and, before reading anything, for an output prefix that
// names no file or whose .bin or .idx is an input (a text or the tokenizer); EnvironmentError when
// the output cannot be written, Interrupted on SIGINT or SIGTERM; the outputs are then as they
// were (no temporary file left). An empty input among others is named in a warning on stderr.
TokenizeSummary tokenize_files(const TokenizeOptions& options);

}  // namespace gpudays::data
