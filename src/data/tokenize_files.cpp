// tokenize_files: reads each input, checks it is UTF-8, tokenizes its documents and writes them.
#include "data/tokenize_files.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "data/bpe_tokenizer.h"
#include "data/megatron_index.h"
#include "data/unicode_text.h"

namespace gpudays::data {
namespace {

bool is_jsonl(const std::string& path) {
  return path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void check_utf8(std::string_view text, const std::string& where, int64_t base_offset) {
  const int64_t bad = first_invalid_utf8(text);
  if (bad >= 0)
    throw InputError(fmt::format("{}: offset {}: not valid UTF-8", where, base_offset + bad));
}

struct DocumentSink {
  const BpeTokenizer& tokenizer;
  MegatronWriter& writer;
  int64_t eod_id;
  std::vector<int64_t> ids;
  void add(std::string_view text) {
    ids.clear();
    tokenizer.encode(text, ids);
    ids.push_back(eod_id);
    writer.add_document(ids);
  }
};

void add_jsonl(const std::string& path, const std::string& contents, DocumentSink& sink) {
  std::istringstream lines(contents);
  std::string line;
  for (int64_t number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string text;
    try {
      text = nlohmann::json::parse(line).at("text").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: line {}: no \"text\" string: {}", path, number, e.what()));
    }
    sink.add(text);
  }
}

// An input that is also an output would be replaced while it is read: refused first.
void refuse_input_as_output(const TokenizeOptions& options) {
  namespace fs = std::filesystem;
  for (const char* suffix : {".bin", ".idx"}) {
    std::error_code ec;
    const fs::path output = fs::weakly_canonical(options.out_prefix + suffix, ec);
    for (const std::string& input : options.inputs) {
      if (!ec && fs::weakly_canonical(input, ec) == output) {
        throw InputError(
            fmt::format("{} is an input and an output (--out {})", input, options.out_prefix));
      }
    }
  }
}

}  // namespace

TokenizeSummary tokenize_files(const TokenizeOptions& options) {
  const BpeTokenizer tokenizer = BpeTokenizer::load(options.tokenizer_path);
  const auto eod = tokenizer.token_id(options.eod_token);
  if (!eod)
    throw InputError(fmt::format("{} has no token '{}'; name the end-of-document token with --eod",
                                 options.tokenizer_path,
                                 options.eod_token));
  if (options.inputs.empty()) throw InputError("no input files to tokenize");
  refuse_input_as_output(options);
  const TokenDtype dtype = token_dtype_for_vocab(tokenizer.vocab_size());
  TokenizeSummary summary;
  summary.dtype = dtype.name;
  const auto start = std::chrono::steady_clock::now();
  MegatronWriter writer(options.out_prefix, dtype);
  DocumentSink sink{tokenizer, writer, *eod, {}};
  for (const std::string& path : options.inputs) {
    const std::string contents = read_file(path);
    check_utf8(contents, path, 0);
    summary.text_bytes += static_cast<int64_t>(contents.size());
    if (is_jsonl(path)) {
      add_jsonl(path, contents, sink);
    } else {
      sink.add(contents);
    }
  }
  writer.finish();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.documents = writer.documents();
  summary.tokens = writer.tokens();
  return summary;
}

}  // namespace gpudays::data
