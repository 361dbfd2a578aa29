// The byte-level BPE pieces (data/byte_level.h, data/bpe_model.h, data/unicode_text.h) on cases
// worked out by hand from GPT-2's pattern and BPE's rules; parity with the `tokenizers` package
// on varied text is tests/datasets/parity.py.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/error.h"
#include "data/bpe_tokenizer.h"
#include "data/byte_level.h"
#include "data/unicode_text.h"
#include "process_dir.h"

namespace gpudays::data {
namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::vector<ByteSpan> spans;
  split_gpt2_words(text, spans);
  std::vector<std::string> words;
  for (const ByteSpan& s : spans) words.push_back(text.substr(s.begin, s.end - s.begin));
  return words;
}

using Words = std::vector<std::string>;

TEST(DataByteLevel, SplitsAsGpt2Pattern) {
  EXPECT_EQ(words_of("Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(words_of("it's they'll I'M"), (Words{"it", "'s", " they", "'ll", " I", "'", "M"}));
  EXPECT_EQ(words_of("a  b"), (Words{"a", " ", " b"}));
  EXPECT_EQ(words_of("a\n\nb"), (Words{"a", "\n", "\n", "b"}));
  EXPECT_EQ(words_of("x   "), (Words{"x", "   "}));
  EXPECT_EQ(words_of("abc123 456!!? ok"), (Words{"abc", "123", " 456", "!!?", " ok"}));
  EXPECT_EQ(words_of(" !!'s"), (Words{" !!'", "s"}));
  EXPECT_EQ(words_of("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC"),
            (Words{"caf\xC3\xA9", " \xE6\x97\xA5\xE6\x9C\xAC"}));
  EXPECT_EQ(words_of("\xC2\xB2\xC2\xBD x"), (Words{"\xC2\xB2\xC2\xBD", " x"}));  // No: numbers
  EXPECT_EQ(words_of("a\xC2\xA0"
                     "b"),
            (Words{"a", "\xC2\xA0", "b"}));  // NBSP: \s
  EXPECT_EQ(words_of(""), Words{});
}

TEST(DataByteLevel, AlphabetMapsEveryByteToADistinctCharacter) {
  const auto alphabet = byte_level_alphabet();
  EXPECT_EQ(alphabet['a'], "a");
  EXPECT_EQ(alphabet[' '], "\xC4\xA0");   // U+0120, GPT-2's 'Ġ'
  EXPECT_EQ(alphabet['\n'], "\xC4\x8A");  // U+010A, 'Ċ'
  std::set<std::string> distinct(alphabet.begin(), alphabet.end());
  EXPECT_EQ(distinct.size(), 256u);
}

TEST(DataUnicode, ValidatesUtf8AndClassifies) {
  EXPECT_EQ(first_invalid_utf8("plain \xE2\x82\xAC ok"), -1);
  EXPECT_EQ(first_invalid_utf8("ab\xFF"), 2);
  EXPECT_EQ(first_invalid_utf8("ab\xC3"), 2);        // truncated
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0);  // a surrogate
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0);      // overlong
  EXPECT_EQ(char_class(U'a'), CharClass::kLetter);
  EXPECT_EQ(char_class(U'\u65E5'), CharClass::kLetter);
  EXPECT_EQ(char_class(U'\u0663'), CharClass::kNumber);
  EXPECT_EQ(char_class(U'\u3000'), CharClass::kSpace);
  EXPECT_EQ(char_class(U'\u0301'), CharClass::kOther);  // a combining mark
  EXPECT_EQ(normalize("e\xCC\x81", NormalForm::kNfc), "\xC3\xA9");
  EXPECT_EQ(normalize("\xEF\xAC\x81", NormalForm::kNfkc), "fi");
}

// A hand-made vocabulary: merges (a b), (ab c), (b c): "abc" merges by rank, not left to right.
BpeTokenizer tiny_tokenizer(bool add_prefix_space) {
  BpeModelOptions model;
  const auto alphabet = byte_level_alphabet();
  for (int b = 0; b < 256; ++b) model.vocab[alphabet[b]] = b;
  model.vocab["ab"] = 256;
  model.vocab["abc"] = 257;
  model.vocab["bc"] = 258;
  model.merges = {{"a", "b"}, {"ab", "c"}, {"b", "c"}};
  TokenizerSettings settings;
  settings.add_prefix_space = add_prefix_space;
  settings.added_tokens = {{"<eod>", 300, false, true}};
  return BpeTokenizer(settings, model);
}

TEST(DataBpe, MergesByRankAndSplitsAddedTokens) {
  const BpeTokenizer tok = tiny_tokenizer(/*add_prefix_space=*/false);
  std::vector<int64_t> ids;
  tok.encode("abc", ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{257}));
  ids.clear();
  tok.encode("bca<eod>abab", ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{258, 'a', 300, 256, 256}));
  ids.clear();
  tok.encode(std::string(20000, 'a') + "b", ids);  // a long word: linear-logarithmic, not quadratic
  EXPECT_EQ(ids.size(), 20000u);
  EXPECT_EQ(ids.back(), 256);
  EXPECT_EQ(tok.token_id("<eod>"), 300);
  EXPECT_EQ(tok.vocab_size(), 301);
}

TEST(DataBpe, PrefixSpaceGoesBeforeEachPieceBetweenAddedTokens) {
  const BpeTokenizer tok = tiny_tokenizer(/*add_prefix_space=*/true);
  std::vector<int64_t> ids;
  tok.encode("ab<eod>c", ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{' ', 256, 300, ' ', 'c'}));
}

TEST(DataBpe, LoadRefusesWhatItCannotReproduce) {
  const std::string path = (test::process_temp_dir().path() / "tok.json").string();
  auto load_with = [&](const std::string& json) {
    std::ofstream(path) << json;
    try {
      BpeTokenizer::load(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string model = R"("model": {"type": "BPE", "vocab": {"a": 0}, "merges": []})";
  EXPECT_EQ(load_with(R"({"pre_tokenizer": {"type": "ByteLevel"}, )" + model + "}"), "");
  EXPECT_EQ(
      load_with(
          R"({"normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "ByteLevel"}, )" +
          model + "}"),
      path +
          ": normalizer 'Lowercase' is not supported; valid: NFC, NFD, NFKC, NFKD or a Sequence of "
          "them");
  EXPECT_EQ(load_with(R"({"pre_tokenizer": {"type": "Whitespace"}, )" + model + "}"),
            path + ": the pre-tokenizer must be ByteLevel (a byte-level BPE tokenizer)");
  EXPECT_EQ(
      load_with(
          R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []}})"),
      path + ": BPE dropout is not supported (it makes tokenization random)");
  EXPECT_EQ(
      load_with(
          R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})"),
      path + ": merge 0 ('a' 'b') names a token the vocabulary lacks");
  EXPECT_NE(load_with("{not json").find(path + ": not a valid tokenizer.json"), std::string::npos);
}

}  // namespace
}  // namespace gpudays::data
