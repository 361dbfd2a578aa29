// Tokenizing a one-document file in pieces (data/tokenize_files.h): read a few bytes at a time
// and cut only where the tokenizer splits anyway, the dataset is byte for byte the one of the
// whole document, for each tokenizer kind of tests/data and text made to tempt a wrong cut (added
// tokens, lstrip, combining marks, contractions, digits, runs of spaces); and the text held at
// once stays near the read size, not the file's. tests/datasets/parity.py checks the same
// against HuggingFace tokenizers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "data/bpe_tokenizer.h"
#include "data/tokenize_files.h"
#include "process_dir.h"
#include "test_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

const std::string kData = GPUDAYS_TEST_DATA_DIR;

// The Genesis texts, one per line, then random runs of pieces that tempt a wrong cut.
std::string tempting_text(int pieces) {
  std::string text;
  std::ifstream in(kData + "/kjv-genesis.jsonl");
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find("\"text\": \"") + 9;
    text += line.substr(a, line.rfind('"') - a) + "\n";
  }
  const std::vector<std::string> pool = {
      "a b",     "ab cd ",  "<mask>",   " <mask> x", "<|endoftext|>", "</s>",   "e\u0301 b",
      "\u00e9",  "it's so", "IT'S A",   "12 ab",     "1234 x",        "  ",     "\n",
      "\n\n ab", "x\ty z",  "\uff21 b", "\u4e2d b",  "!! ab",         "a<s>b c"};
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

TEST(TokenizePieces, ManySmallReadsGiveTheWholeDocumentsDataset) {
  const std::string text_path = test::fresh_path("doc.txt");
  std::ofstream(text_path, std::ios::binary) << tempting_text(4000);
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"kjv-genesis-tokenizer.json", "<|endoftext|>"},
      {"kjv-genesis-roberta-tokenizer.json", "</s>"},
      {"kjv-genesis-llama-tokenizer.json", "</s>"}};
  for (const auto& [file, eod] : kinds) {
    const std::string tokenizer = kData + "/" + file;
    const std::string whole = tokenize_bin(tokenizer, eod, text_path, size_t{1} << 30);
    for (const size_t read_bytes : {1, 2, 5, 13, 64, 4096}) {
      EXPECT_EQ(tokenize_bin(tokenizer, eod, text_path, read_bytes), whole)
          << file << " read " << read_bytes << " bytes at a time";
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
  int64_t held = 0;
  tokenize_bin(kData + "/kjv-genesis-tokenizer.json", "<|endoftext|>", text_path, 4096, &held);
  EXPECT_GT(held, 0);
  EXPECT_LE(held, 2 * 4096) << "a piece of " << held << " bytes";
  // Without a place to cut (the Llama-2 form has no pre-tokenizer) the document is held whole.
  tokenize_bin(kData + "/kjv-genesis-llama-tokenizer.json", "</s>", text_path, 4096, &held);
  EXPECT_EQ(held, static_cast<int64_t>(fs::file_size(text_path)));
}

TEST(TokenizePieces, CutsOnlyBetweenWordsNoAddedTokenSpans) {
  const data::BpeTokenizer neox = data::BpeTokenizer::load(kData + "/kjv-genesis-tokenizer.json");
  const std::string text = "In the beginning God created the heaven and the earth.";
  EXPECT_TRUE(neox.splits_at(text, 2));    // "In| the"
  EXPECT_FALSE(neox.splits_at(text, 3));   // inside "the"
  EXPECT_FALSE(neox.splits_at(text, 50));  // near the end: not known yet
  EXPECT_FALSE(neox.splits_at("ab\u00e9 cd and more text here ok", 4));  // not ASCII around
  const data::BpeTokenizer roberta =
      data::BpeTokenizer::load(kData + "/kjv-genesis-roberta-tokenizer.json");
  EXPECT_FALSE(roberta.splits_at("x <mask> and more text here", 1));  // before an added token
  const data::BpeTokenizer llama =
      data::BpeTokenizer::load(kData + "/kjv-genesis-llama-tokenizer.json");
  EXPECT_FALSE(llama.splits_at(text, 2));  // no pre-tokenizer: one word
}

}  // namespace
}  // namespace gpudays
