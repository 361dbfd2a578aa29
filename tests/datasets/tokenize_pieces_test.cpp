// Tokenizing a one-document file in pieces (data/tokenize_files.h): read a few bytes at a time
// and cut only where the tokenizer splits anyway, the dataset is byte for byte the one of the
// whole document, for each tokenizer kind of tests/data (and the Llama-2 fixture made Metaspace
// with each prepend scheme, with and without split, and given merges into "▁") and text made to
// tempt a wrong cut (added tokens, lstrip, combining marks, contractions, digits, runs of spaces,
// "▁" in the text); and the text held at once stays near the read size, not the file's.
// tests/datasets/parity.py checks the same against HuggingFace tokenizers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "data/bpe_tokenizer.h"
#include "data/tokenize_files.h"
#include "process_dir.h"
#include "test_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

const std::string kData = GPUDAYS_TEST_DATA_DIR;
const std::string kLlama = kData + "/kjv-genesis-llama-tokenizer.json";

// The Genesis texts, one per line, then random runs of pieces that tempt a wrong cut.
std::string tempting_text(int pieces) {
  std::string text;
  std::ifstream in(kData + "/kjv-genesis.jsonl");
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find("\"text\": \"") + 9;
    text += line.substr(a, line.rfind('"') - a) + "\n";
  }
  const std::vector<std::string> pool = {
      "a b",       "ab cd ",  "<mask>",   " <mask> x", "<|endoftext|>", "</s>",    "e\u0301 b",
      "\u00e9",    "it's so", "IT'S A",   "12 ab",     "1234 x",        "  ",      "\n",
      "\n\n ab",   "x\ty z",  "\uff21 b", "\u4e2d b",  "!! ab",         "a<s>b c", "e \u2581x",
      "e\u2581 e", " e  e",   "he <s> e", "K q",       "e</s> e"};
  std::mt19937 rng(11);
  for (int i = 0; i < pieces; ++i) text += pool[rng() % pool.size()];
  return text;
}

// PREFIX.bin of `text` as one document, read `read_bytes` at a time.
std::string tokenize_bin(const std::string& tokenizer,
                         const std::string& eod,
                         const std::string& text_path,
                         size_t read_bytes,
                         int64_t* held_bytes_max = nullptr) {
  data::TokenizeOptions o;
  o.tokenizer_path = tokenizer;
  o.inputs = {text_path};
  o.out_prefix = test::fresh_path("pieces");
  o.eod_token = eod;
  o.read_bytes = read_bytes;
  const data::TokenizeSummary s = data::tokenize_files(o);
  if (held_bytes_max != nullptr) *held_bytes_max = s.held_bytes_max;
  return test::read_file(o.out_prefix + ".bin");
}

// `json` with the text from `from` up to and including the next `through` replaced by `to`.
std::string replaced(std::string json,
                     const std::string& from,
                     const std::string& through,
                     const std::string& to) {
  const size_t begin = json.find(from), end = json.find(through, begin);
  EXPECT_NE(end, std::string::npos) << from;
  if (end != std::string::npos) json.replace(begin, end + through.size() - begin, to);
  return json;
}

std::string written(const std::string& name, const std::string& json) {
  const std::string path = test::fresh_path(name + ".json");
  std::ofstream(path, std::ios::binary) << json;
  return path;
}

// The fixture with Metaspace instead of Prepend and Replace (tokenizers' newer Llama-2 files).
std::string metaspace_variant(const std::string& scheme, bool split) {
  const std::string metaspace = fmt::format(
      R"("normalizer": null, "pre_tokenizer": {{"type": "Metaspace", "replacement": "\u2581", )"
      R"("prepend_scheme": "{}", "split": {}}})",
      scheme,
      split);
  return written(
      "metaspace-" + scheme + (split ? "-split" : ""),
      replaced(test::read_file(kLlama), "\"normalizer\": {", "\"pre_tokenizer\": null", metaspace));
}

// The fixture with "e▁" and "▁▁" merged first: no cut after "e" ("e▁" would be lost), and runs of
// spaces merge.
std::string joining_variant() {
  std::string json = test::read_file(kLlama);
  json = replaced(json,
                  "\"vocab\": {",
                  "\"vocab\": {",
                  "\"vocab\": {\"e\u2581\": 512, \"\u2581\u2581\": 513, ");
  json = replaced(json,
                  "\"merges\": [",
                  "\"merges\": [",
                  "\"merges\": [[\"e\", \"\u2581\"], [\"\u2581\", \"\u2581\"], ");
  return written("joining", json);
}

TEST(TokenizePieces, ManySmallReadsGiveTheWholeDocumentsDataset) {
  const std::string text_path = test::fresh_path("doc.txt");
  std::ofstream(text_path, std::ios::binary) << tempting_text(4000);
  std::vector<std::pair<std::string, std::string>> kinds = {
      {kData + "/kjv-genesis-tokenizer.json", "<|endoftext|>"},
      {kData + "/kjv-genesis-roberta-tokenizer.json", "</s>"},
      {kLlama, "</s>"},
      {joining_variant(), "</s>"}};
  for (const std::string scheme : {"first", "always", "never"})
    for (const bool split : {false, true})
      kinds.emplace_back(metaspace_variant(scheme, split), "</s>");
  for (const auto& [tokenizer, eod] : kinds) {
    const std::string whole = tokenize_bin(tokenizer, eod, text_path, size_t{1} << 30);
    for (const size_t read_bytes : {1, 2, 5, 13, 64, 4096}) {
      EXPECT_EQ(tokenize_bin(tokenizer, eod, text_path, read_bytes), whole)
          << tokenizer << " read " << read_bytes << " bytes at a time";
    }
  }
}

TEST(TokenizePieces, HoldsAboutTheReadSizeNotTheFile) {
  const std::string text_path = test::fresh_path("big.txt");
  {
    std::ofstream out(text_path, std::ios::binary);
    const std::string text = tempting_text(0);
    for (int i = 0; i < 40; ++i) out << text;  // 1.9 MB
  }
  const std::vector<std::pair<std::string, std::string>> cut = {
      {kData + "/kjv-genesis-tokenizer.json", "<|endoftext|>"},
      {kLlama, "</s>"},
      {metaspace_variant("first", /*split=*/false), "</s>"}};
  for (const auto& [tokenizer, eod] : cut) {
    int64_t held = 0;
    tokenize_bin(tokenizer, eod, text_path, 4096, &held);
    EXPECT_GT(held, 0) << tokenizer;
    EXPECT_LE(held, 2 * 4096) << tokenizer << ": a piece of " << held << " bytes";
  }
  // A vocabulary the cut rule cannot vouch for (a word that is a token is that token, whatever
  // the merges would make of it) is held whole.
  int64_t held = 0;
  tokenize_bin(written("whole-words",
                       replaced(test::read_file(kLlama),
                                "\"ignore_merges\": false",
                                "\"ignore_merges\": false",
                                "\"ignore_merges\": true")),
               "</s>",
               text_path,
               4096,
               &held);
  EXPECT_EQ(held, static_cast<int64_t>(fs::file_size(text_path)));
}

TEST(TokenizePieces, CutsOnlyWhereTheTokenizerAllowsNoAddedTokenSpans) {
  const data::BpeTokenizer neox = data::BpeTokenizer::load(kData + "/kjv-genesis-tokenizer.json");
  const std::string text = "In the beginning God created the heaven and the earth.";
  EXPECT_TRUE(neox.splits_at(text, 2));    // "In| the"
  EXPECT_FALSE(neox.splits_at(text, 3));   // inside "the"
  EXPECT_FALSE(neox.splits_at(text, 50));  // near the end: not known yet
  EXPECT_FALSE(neox.splits_at("ab\u00e9 cd and more text here ok", 4));  // not ASCII around
  const data::BpeTokenizer roberta =
      data::BpeTokenizer::load(kData + "/kjv-genesis-roberta-tokenizer.json");
  EXPECT_FALSE(roberta.splits_at("x <mask> and more text here", 1));  // before an added token
  // One word (no pre-tokenizer): before a space after a letter that no merge joins to "▁".
  const data::BpeTokenizer llama = data::BpeTokenizer::load(kLlama);
  EXPECT_TRUE(llama.splits_at(text, 2));    // "In| the"
  EXPECT_TRUE(llama.splits_at(text, 43));   // "and| the"
  EXPECT_FALSE(llama.splits_at(text, 40));  // "heaven a|nd": not before a space
  const data::BpeTokenizer joining = data::BpeTokenizer::load(joining_variant());
  EXPECT_FALSE(joining.splits_at(text, 6));  // "the| beginning": "e▁" joins the halves
  EXPECT_TRUE(joining.splits_at(text, 2));
}

}  // namespace
}  // namespace gpudays
