// `gpudays data ...` end to end: tokenize a text with a tokenizer.json, inspect the dataset and a
// sample, and corrupted files (truncated, wrong magic, offsets past the end) or bad UTF-8 give
// one line naming the file and the offset, with exit status 2.
#include <gtest/gtest.h>
#include <stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

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
  const std::string folder = std::filesystem::path(tokenizer).parent_path().string();
  r = test::run_gpudays("data tokenize --tokenizer " + folder + " --out " + temp("d") + " " + text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: tokenizer " + folder + " is a directory; give its tokenizer.json\n");
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

// An output prefix that names no file, or whose .bin or .idx is an input (a text or the
// tokenizer), is refused before anything is written: no hidden ".bin" and ".idx" appear.
TEST(DataCli, TokenizeRefusesOutputsThatNameNoFileOrAnInput) {
  const std::string tokenizer = write_tokenizer();
  const std::string dir = test::process_temp_dir().fresh_dir("tokenize-out");
  const std::string text = dir + "/doc.txt";
  std::ofstream(text) << "hello";
  const std::string tokenize = "data tokenize --tokenizer " + tokenizer + " --out ";
  const auto empty = test::run_gpudays(tokenize + "'' " + text);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "gpudays: error: --out is empty; name the file to write\n");
  EXPECT_FALSE(std::filesystem::exists(".bin"));
  const auto slash = test::run_gpudays(tokenize + dir + "/ " + text);
  EXPECT_EQ(slash.exit_code, 2);
  EXPECT_EQ(slash.err, "gpudays: error: --out " + dir + "/ names a directory; give a file name\n");
  const std::string copy = dir + "/tok.idx";
  std::filesystem::copy_file(tokenizer, copy);
  const std::string bytes = contents(copy);
  const auto over =
      test::run_gpudays("data tokenize --tokenizer " + copy + " --out " + dir + "/tok " + text);
  EXPECT_EQ(over.exit_code, 2);
  EXPECT_EQ(over.err,
            "gpudays: error: " + copy + " is an input and an output (--out " + copy +
                "); choose another output\n");
  EXPECT_EQ(contents(copy), bytes);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            2);
}

// Malformed tokenizers, documents and inputs are named in words (never the JSON library's text),
// with the system's reason for an input that cannot be opened.
TEST(DataCli, TokenizeErrorsSayWhatIsWrongInOneLine) {
  const std::string dir = test::process_temp_dir().fresh_dir("tokenize-errors");
  const std::string text = dir + "/doc.txt";
  std::ofstream(text) << "hello";
  const auto run = [&](const std::string& tokenizer, const std::string& input) {
    return test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " + dir + "/o " +
                             input);
  };
  const std::string no_model = dir + "/no-model.json";
  std::ofstream(no_model) << R"({"version": "1.0", "added_tokens": []})";
  auto r = run(no_model, text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpudays: error: " + no_model + ": tokenizer.json has no 'model' key\n");
  const std::string not_json = dir + "/not.json";
  std::ofstream(not_json) << "{\"model\": nope}";
  r = run(not_json, text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: " + not_json +
                ": tokenizer.json is not JSON (at line 1, column 12: invalid literal)\n");
  const std::string tokenizer = write_tokenizer();
  const std::string jsonl = dir + "/docs.jsonl";
  std::ofstream(jsonl) << "{\"text\": \"hello\"}\n{\"body\": \"hello\"}\n{\"text\": 5}\n";
  r = run(tokenizer, jsonl);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpudays: error: " + jsonl + ": line 2: the document has no 'text' key\n");
  std::ofstream(jsonl) << "{\"text\": 5}\n";
  r = run(tokenizer, jsonl);
  EXPECT_EQ(
      r.err,
      "gpudays: error: " + jsonl + ": line 1: the document has a number where a string belongs\n");
  r = run(tokenizer, dir + "/missing.txt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: cannot open " + dir + "/missing.txt: No such file or directory\n");
  r = run(dir + "/missing.json", text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: cannot open tokenizer " + dir +
                "/missing.json: No such file or directory\n");
  r = run(tokenizer, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpudays: error: " + dir + " is a directory, not a text file\n");
  if (::geteuid() != 0) {  // root reads a file of mode 000
    ::chmod(text.c_str(), 0);
    r = run(tokenizer, text);
    EXPECT_EQ(r.err, "gpudays: error: cannot open " + text + ": Permission denied\n");
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.bin"));
}

// A document is held in memory only as far as --max-held-mib: a stretch with no place to cut, a
// .jsonl line, or a file with no end (/dev/zero, read as text and as .jsonl) is refused in one
// line, and nothing is written; the same length with places to cut is tokenized.
TEST(DataCli, TokenizeHoldsAtMostMaxHeldMibOfADocument) {
  const std::string dir = test::process_temp_dir().fresh_dir("tokenize-held");
  const std::string tokenizer = write_tokenizer();
  const size_t length = (size_t{3} << 20) / 2;  // 1.5 MiB
  const std::string uncut = dir + "/uncut.txt", cut = dir + "/cut.txt", line = dir + "/a.jsonl";
  std::ofstream(uncut) << std::string(length, 'a');
  std::string words;
  while (words.size() < length) words += "hello ";
  std::ofstream(cut) << words;
  std::ofstream(line) << "{\"text\": \"" << std::string(length, 'a') << "\"}\n";
  const std::string zero = dir + "/zero.jsonl";
  std::filesystem::create_symlink("/dev/zero", zero);
  const auto run = [&](const std::string& input) {
    return test::run_gpudays("data tokenize --max-held-mib 1 --tokenizer " + tokenizer + " --out " +
                             dir + "/o " + input);
  };
  const std::pair<std::string, std::string> refused[] = {
      {uncut,
       uncut + ": offset 0: more than 1 MiB of the document with no place where the tokenizer "
               "can cut it"},
      {"/dev/zero", "/dev/zero: offset 0: more than 1 MiB of the document"},
      {line, line + ": line 1: longer than 1 MiB; a .jsonl document is held whole"},
      {zero, zero + ": line 1: longer than 1 MiB"}};
  for (const auto& [input, needle] : refused) {
    const auto r = run(input);
    EXPECT_EQ(r.exit_code, 2) << input << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/o.bin")) << input;
  }
  const auto r = run(cut);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 document"), std::string::npos) << r.out;
  const auto zero_tokenizer =
      test::run_gpudays("data tokenize --tokenizer /dev/zero --out " + dir + "/z " + cut);
  EXPECT_EQ(zero_tokenizer.exit_code, 2) << zero_tokenizer.err;
  EXPECT_EQ(zero_tokenizer.err, "gpudays: error: /dev/zero is a device; give a regular file\n");
}

// Empty inputs: alone, refused (a dataset of end-of-document tokens); among others, each named in
// a warning. Counts of one are singular.
TEST(DataCli, EmptyInputsAreRefusedAloneAndWarnedAboutAmongOthers) {
  const std::string tokenizer = write_tokenizer();
  const std::string dir = test::process_temp_dir().fresh_dir("tokenize-empty");
  const std::string empty = dir + "/empty.txt";
  std::ofstream(empty) << "";
  const std::string tokenize = "data tokenize --tokenizer " + tokenizer + " --out " + dir + "/e ";
  auto r = test::run_gpudays(tokenize + empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: no text to tokenize: " + empty + " has no document with text\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/e.bin"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/e.idx"));
  const std::string text = dir + "/doc.txt";
  std::ofstream(text) << "hello hello";
  r = test::run_gpudays(tokenize + text + " " + empty);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "warning: " + empty +
                " is empty; it is one empty document (the end-of-document token alone)\n");
  EXPECT_NE(r.out.find(": 2 documents, 5 tokens (uint16)"), std::string::npos) << r.out;
  const auto inspect = test::run_gpudays("data inspect " + dir + "/e --seq-len 3");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find(": 1 sample of 3 + 1 tokens"), std::string::npos) << inspect.out;
}

// `data images --out` inside --in (an input image, or a file the next run would read) is refused;
// the image is as it was.
TEST(DataCli, ImagesRefuseAnOutputInsideTheInputFolder) {
  const std::string dir = test::process_temp_dir().fresh_dir("images-out");
  std::filesystem::create_directories(dir + "/in/cat");
  const std::vector<uint8_t> pixels(4 * 4 * 3, 200);
  const std::string image = dir + "/in/cat/0.png";
  stbi_write_png(image.c_str(), 4, 4, 3, pixels.data(), 4 * 3);
  const std::string bytes = contents(image);
  for (const std::string& out : {image, dir + "/in/new.pack"}) {
    const auto r = test::run_gpudays("data images --in " + dir + "/in --out " + out + " --size 2");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err,
              "gpudays: error: --out " + out + " is inside the input folder " + dir +
                  "/in; write it elsewhere\n");
  }
  EXPECT_EQ(contents(image), bytes);
  EXPECT_FALSE(std::filesystem::exists(dir + "/in/new.pack"));
  const auto empty = test::run_gpudays("data images --in " + dir + "/in --out '' --size 2");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "gpudays: error: --out is empty; name the file to write\n");
  const auto ok =
      test::run_gpudays("data images --in " + dir + "/in --out " + dir + "/one.pack --size 2");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find(": 1 image of 2x2 in 1 class\n"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace gpudays
