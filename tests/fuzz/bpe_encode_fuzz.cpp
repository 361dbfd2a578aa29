// Fuzz target: the byte-level BPE tokenizer (data/bpe_tokenizer.h) that `gpudays data tokenize`
// runs on any text. A fixed tokenizer (every byte, a few merges, raw and normalized added tokens,
// no normalizer) encodes each well-formed UTF-8 input; a bug is a sanitizer report, an id outside
// the vocabulary, or ids whose tokens do not spell the input back byte for byte (the word split
// must cover the text and BPE must keep its bytes).
#include <unordered_map>

#include "data/bpe_tokenizer.h"
#include "data/byte_level.h"
#include "data/unicode_text.h"
#include "fuzz_util.h"

namespace {

using namespace gpudays::data;

struct Fixture {
  BpeTokenizer tokenizer;
  std::unordered_map<int64_t, std::string> bytes_of;  // id -> the raw bytes it stands for
};

Fixture make_fixture() {
  const auto alphabet = byte_level_alphabet();
  BpeModelOptions model;
  std::unordered_map<int64_t, std::string> bytes_of;
  for (int b = 0; b < 256; ++b) {
    model.vocab[alphabet[b]] = b;
    bytes_of[b] = std::string(1, static_cast<char>(b));
  }
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"t", "h"},
      {"th", "e"},
      {alphabet[' '], "the"},
      {"e", "r"},
      {"i", "n"},
      {"in", "g"},
      {alphabet[' '], alphabet[' ']},
      {alphabet[0xC3], alphabet[0xA9]}};
  int32_t next = 256;
  for (const auto& [a, b] : merges) {
    model.merges.emplace_back(a, b);
    model.vocab[a + b] = next;
    bytes_of[next] = bytes_of[model.vocab[a]] + bytes_of[model.vocab[b]];
    ++next;
  }
  TokenizerSettings settings;
  settings.added_tokens = {{"<|endoftext|>", 400, false, true}, {"   ", 401, true, false}};
  bytes_of[400] = "<|endoftext|>";
  bytes_of[401] = "   ";
  return {BpeTokenizer(settings, model), bytes_of};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture = make_fixture();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (first_invalid_utf8(text) >= 0) return 0;
  std::vector<int64_t> ids;
  fixture.tokenizer.encode(text, ids);
  std::string spelled;
  for (const int64_t id : ids) {
    const auto found = fixture.bytes_of.find(id);
    if (found == fixture.bytes_of.end()) gpudays::fuzz::fail("an id outside the vocabulary");
    spelled += found->second;
  }
  if (spelled != text) gpudays::fuzz::fail("the ids do not spell the input back");
  return 0;
}
