// tokenize_files: reads each input, checks it is UTF-8, tokenizes its documents and writes them.
#include "data/tokenize_files.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_errors.h"
#include "common/output_files.h"
#include "data/bpe_tokenizer.h"
#include "data/megatron_index.h"
#include "data/unicode_text.h"

namespace gpudays::data {
namespace {

bool is_jsonl(const std::string& path) {
  return path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0;
}

// The system's reason for the last failure ("No such file or directory", "Permission denied").
std::string system_reason() {
  return errno != 0 ? std::strerror(errno) : "read failed";
}

std::ifstream open_input(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(fmt::format("{} is a directory, not a text file", path));
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open {}: {}", path, system_reason()));
  return in;
}

void check_utf8(std::string_view text, const std::string& where, int64_t base_offset) {
  const int64_t bad = first_invalid_utf8(text);
  if (bad >= 0)
    throw InputError(fmt::format("{}: offset {}: not valid UTF-8", where, base_offset + bad));
}

// Documents into the writer, each either whole or in pieces that end where the tokenizer splits
// anyway; polls for SIGINT/SIGTERM between pieces so that the writer's temporary files go.
struct DocumentSink {
  const BpeTokenizer& tokenizer;
  MegatronWriter& writer;
  int64_t eod_id;
  std::vector<int64_t> ids;
  int64_t held_bytes_max = 0;
  TextStart next_start = TextStart::kStart;  // a document's later pieces continue its first
  void add_piece(std::string_view text) {
    throw_if_interrupted();
    held_bytes_max = std::max(held_bytes_max, static_cast<int64_t>(text.size()));
    ids.clear();
    tokenizer.encode(text, ids, next_start);
    next_start = TextStart::kContinuation;
    writer.add_tokens(ids);
  }
  void end_document() {
    writer.add_tokens({eod_id});
    writer.end_document();
    next_start = TextStart::kStart;
  }
  void add(std::string_view text) {
    add_piece(text);
    end_document();
  }
};

// The last byte of `text` before which the tokenizer splits anyway (0: none), looked for from
// the end; only the newest `fresh` bytes (and the lookahead before them) are new since the last
// look.
size_t last_cut(const BpeTokenizer& tokenizer, std::string_view text, size_t fresh) {
  const size_t back = fresh + tokenizer.cut_lookahead();
  const size_t floor = text.size() > back ? text.size() - back : 0;
  for (size_t at = text.size(); at-- > floor + 1;) {
    if (tokenizer.splits_at(text, at)) return at;
  }
  return 0;
}

std::string mib_text(size_t bytes) {
  return fmt::format("{:g} MiB", static_cast<double>(bytes) / (1 << 20));
}

// A file that is one document, read `read_bytes` at a time and tokenized in pieces where the
// tokenizer allows (BpeTokenizer::splits_at): memory is bounded by the longest stretch without a
// place to cut, not by the file, and a stretch longer than `max_held` is refused. Returns the
// bytes read.
int64_t add_text_file(const std::string& path, const TokenizeOptions& options, DocumentSink& sink) {
  std::ifstream in = open_input(path);
  std::string buffer;
  std::vector<char> block(options.read_bytes);
  int64_t offset = 0;  // of buffer[0] in the file
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    throw_if_interrupted();
    const size_t got = static_cast<size_t>(in.gcount());
    buffer.append(block.data(), got);
    const size_t cut = last_cut(sink.tokenizer, buffer, got);
    if (cut == 0 && buffer.size() > options.max_held_bytes) {
      throw InputError(fmt::format(
          "{}: offset {}: more than {} of the document with no place where the tokenizer can "
          "cut it (a space after an ASCII letter or digit); split it into documents (one per "
          "line of a .jsonl file) or raise --max-held-mib",
          path,
          offset,
          mib_text(options.max_held_bytes)));
    }
    if (cut == 0) continue;
    const std::string_view piece(buffer.data(), cut);
    check_utf8(piece, path, offset);
    sink.add_piece(piece);
    buffer.erase(0, cut);
    offset += static_cast<int64_t>(cut);
  }
  if (in.bad()) throw InputError(fmt::format("cannot read {}: {}", path, system_reason()));
  check_utf8(buffer, path, offset);
  sink.add_piece(buffer);
  sink.end_document();
  return offset + static_cast<int64_t>(buffer.size());
}

// A line buffer that holds at most `max_bytes` (and one more, to tell a longer line); its memory
// is touched only as far as the longest line.
struct LineBuffer {
  explicit LineBuffer(size_t max_bytes) : max(max_bytes), data(new char[max_bytes + 2]) {}
  size_t max;
  std::unique_ptr<char[]> data;
};

// The next line of `in` into `line`, without its newline; the bytes it took from the file (the
// newline included), 0 at the end. A line longer than the buffer's most is an InputError: it would
// be held whole, and a file with no newline (/dev/zero) would be read to its end.
size_t read_line(std::istream& in,
                 LineBuffer& buf,
                 std::string_view& line,
                 const std::string& path,
                 int64_t number) {
  in.getline(buf.data.get(), static_cast<std::streamsize>(buf.max + 2));
  const size_t got = static_cast<size_t>(in.gcount());
  if (in.fail() && !in.bad() && got > buf.max) {
    throw InputError(fmt::format(
        "{}: line {}: longer than {}; a .jsonl document is held whole: split it, or raise "
        "--max-held-mib",
        path,
        number,
        mib_text(buf.max)));
  }
  const bool newline = !in.fail() && !in.eof();
  line = std::string_view(buf.data.get(), newline ? got - 1 : got);
  return got;
}

// One document per line (its "text"), read line by line. Returns the bytes read.
int64_t add_jsonl_file(const std::string& path, size_t max_held, DocumentSink& sink) {
  std::ifstream in = open_input(path);
  LineBuffer buffer(max_held);
  int64_t offset = 0;
  std::string_view line;
  for (int64_t number = 1;; ++number) {
    const size_t taken = read_line(in, buffer, line, path, number);
    if (taken == 0) break;
    throw_if_interrupted();
    check_utf8(line, path, offset);
    offset += static_cast<int64_t>(taken);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string text;
    try {
      text = nlohmann::json::parse(line).at("text").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format(
          "{}: line {}: the document {}", path, number, json_problem(e, /*one_line=*/true)));
    }
    sink.add(text);
  }
  if (in.bad()) throw InputError(fmt::format("cannot read {}: {}", path, system_reason()));
  return offset;
}

// An output prefix that names no file (empty, "dir/") would write hidden files ".bin" and ".idx";
// an input (a text or the tokenizer) that is also an output would be replaced while it is read.
// Both refused first.
void check_outputs(const TokenizeOptions& options) {
  check_output_name(options.out_prefix, "--out");
  std::vector<std::string> inputs = options.inputs;
  inputs.push_back(options.tokenizer_path);
  for (const char* suffix : {".bin", ".idx"}) {
    check_output_file(options.out_prefix + suffix, "--out");
    refuse_output_over_inputs(options.out_prefix + suffix, inputs, "--out");
  }
}

// A dataset without text (every input empty, or .jsonl files of blank lines) is refused: it would
// hold end-of-document tokens alone, or nothing.
void refuse_no_text(const TokenizeOptions& options, int64_t text_bytes, int64_t documents) {
  if (text_bytes > 0 && documents > 0) return;
  throw InputError(fmt::format("no text to tokenize: {} {} no document with text",
                               fmt::join(options.inputs, ", "),
                               options.inputs.size() == 1 ? "has" : "have"));
}

}  // namespace

TokenizeSummary tokenize_files(const TokenizeOptions& options) {
  check_outputs(options);
  const BpeTokenizer tokenizer = BpeTokenizer::load(options.tokenizer_path);
  const auto eod = tokenizer.token_id(options.eod_token);
  if (!eod)
    throw InputError(fmt::format("{} has no token '{}'; name the end-of-document token with --eod",
                                 options.tokenizer_path,
                                 options.eod_token));
  if (options.inputs.empty()) throw InputError("no input files to tokenize");
  const TokenDtype dtype = token_dtype_for_vocab(tokenizer.vocab_size());
  TokenizeSummary summary;
  summary.dtype = dtype.name;
  const auto start = std::chrono::steady_clock::now();
  const InterruptScope interrupt_scope;  // SIGINT/SIGTERM: the temporary files are removed
  MegatronWriter writer(options.out_prefix, dtype);
  DocumentSink sink{tokenizer, writer, *eod, {}};
  std::vector<std::string> empty;
  for (const std::string& path : options.inputs) {
    const int64_t bytes = is_jsonl(path) ? add_jsonl_file(path, options.max_held_bytes, sink)
                                         : add_text_file(path, options, sink);
    if (bytes == 0) empty.push_back(path);
    summary.text_bytes += bytes;
  }
  throw_if_interrupted();
  refuse_no_text(options, summary.text_bytes, writer.documents());
  for (const std::string& path : empty) {
    std::cerr << fmt::format("warning: {} is empty; {}\n",
                             path,
                             is_jsonl(path) ? "it adds no document"
                                            : "it is one empty document (the end-of-document "
                                              "token alone)");
  }
  writer.finish();
  summary.held_bytes_max = sink.held_bytes_max;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.documents = writer.documents();
  summary.tokens = writer.tokens();
  return summary;
}

}  // namespace gpudays::data
