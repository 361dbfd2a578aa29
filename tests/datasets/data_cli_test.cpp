// `gpudays data ...` end to end: tokenize a text with a tokenizer.json, inspect the dataset and a
// sample, and corrupted files (truncated, wrong magic, offsets past the end) or bad UTF-8 give
// one line naming the file and the offset, with exit status 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "process_dir.h"
#include "test_util.h"

namespace gpudays {
namespace {

std::string temp(const std::string& name) {
  return (test::process_temp_dir().path() / name).string();
}

// A byte-level BPE tokenizer.json: bytes, merges (h e) (he l) (hel l) (hell o), <|endoftext|> 300.
std::string write_tokenizer() {
  std::string vocab;
  const char* printable = "abcdefghijklmnopqrstuvwxyz";
  for (int i = 0; printable[i] != '\0'; ++i)
    vocab += fmt::format("\"{}\": {}, ", printable[i], static_cast<int>(printable[i]));
  vocab +=
      "\"\\u0120\": 32, \"\\u010a\": 10, \"he\": 256, \"hel\": 257, \"hell\": 258, \"hello\": 259";
  const std::string json =
      R"({"version": "1.0", "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
    "added_tokens": [{"id": 300, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
                      "rstrip": false, "normalized": false, "special": true}],
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "vocab": {)" +
      vocab + R"(}, "merges": [["h", "e"], ["he", "l"], ["hel", "l"], ["hell", "o"]]}})";
  const std::string path = temp("tokenizer.json");
  std::ofstream(path) << json;
  return path;
}

TEST(DataCli, TokenizeThenInspect) {
  const std::string tokenizer = write_tokenizer();
  const std::string text = temp("doc.txt");
  std::ofstream(text) << "hello hello";
  const std::string jsonl = temp("docs.jsonl");
  std::ofstream(jsonl) << "{\"text\": \"hello\"}\n\n{\"text\": \"he<|endoftext|>\"}\n";
  const auto run = test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " +
                                     temp("ds") + " " + text + " " + jsonl);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("3 documents, 9 tokens (uint16)"), std::string::npos) << run.out;
  // hello Ġhello <eod> | hello <eod> | he <eod> <eod>: ids 259 32 259 300 259 300 256 300 300
  const auto inspect = test::run_gpudays("data inspect " + temp("ds") + " --seq-len 4 --sample 1");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("2 samples of 4 + 1 tokens, ids below 65536"), std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("sample 1: [259, 300, 256, 300, 300]"), std::string::npos)
      << inspect.out;
}

TEST(DataCli, CorruptFilesExitTwoWithOneLine) {
  const std::string tokenizer = write_tokenizer();
  const std::string text = temp("one.txt");
  std::ofstream(text) << "hello hello hello hello";
  ASSERT_EQ(test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " + temp("c") +
                              " " + text)
                .exit_code,
            0);
  std::ifstream in(temp("c.idx"), std::ios::binary);
  const std::string idx{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::ofstream(temp("c.idx"), std::ios::binary) << "MMIDIDY" << idx.substr(7);
  auto r = test::run_gpudays("data inspect " + temp("c") + " --seq-len 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: " + temp("c.idx") +
                ": offset 0: wrong magic; not a Megatron-LM index (expected MMIDIDX\\0\\0)\n");
  std::ofstream(temp("c.idx"), std::ios::binary) << idx.substr(0, 30);
  r = test::run_gpudays("data inspect " + temp("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: " + temp("c.idx") +
                ": offset 30: truncated: 30 bytes, the header alone is 34\n");
  std::ofstream(temp("bad.txt"), std::ios::binary) << "ok \xff";
  r = test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " + temp("b") + " " +
                        temp("bad.txt"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpudays: error: " + temp("bad.txt") + ": offset 3: not valid UTF-8\n");
  r = test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --eod '<eos>' --out " +
                        temp("b") + " " + text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: " + tokenizer +
                " has no token '<eos>'; name the end-of-document token with --eod\n");
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A failed tokenize (a later input not UTF-8) leaves the earlier dataset of that prefix as it was,
// and no file beside it; an input named like an output is refused before anything is written.
TEST(DataCli, FailedTokenizeLeavesTheOldDatasetAsItWas) {
  const std::string tokenizer = write_tokenizer();
  const std::string good = temp("good.txt");
  std::ofstream(good) << "hello";
  const std::string prefix = temp("kept");
  ASSERT_EQ(
      test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " + prefix + " " + good)
          .exit_code,
      0);
  const std::string bin = contents(prefix + ".bin"), idx = contents(prefix + ".idx");
  const std::string bad = temp("bad.txt");
  std::ofstream(bad) << "hello \xff";
  const auto failed = test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " +
                                        prefix + " " + good + " " + good + " " + bad);
  EXPECT_EQ(failed.exit_code, 2) << failed.err;
  EXPECT_NE(failed.err.find("not valid UTF-8"), std::string::npos) << failed.err;
  EXPECT_EQ(contents(prefix + ".bin"), bin);
  EXPECT_EQ(contents(prefix + ".idx"), idx);
  int beside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::process_temp_dir().path()))
    beside += entry.path().filename().string().find("kept") != std::string::npos;
  EXPECT_EQ(beside, 2) << "a partial file was left beside kept.bin and kept.idx";

  const auto same = test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " +
                                      prefix + " " + prefix + ".bin");
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("is an input and an output"), std::string::npos) << same.err;
  EXPECT_EQ(contents(prefix + ".bin"), bin);
}

}  // namespace
}  // namespace gpudays
