// The tokenizer's pieces (data/word_split.h, data/byte_level.h, data/bpe_model.h,
// data/normalizer.h, data/unicode_text.h) on cases worked out by hand from the split patterns
// (GPT-2's, Llama-3's, Qwen2's; the expected words checked with `tokenizers`' Split pre-tokenizer)
// and BPE's rules, and the loader's refusals; parity with the `tokenizers` package on varied text
// is tests/datasets/parity.py.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "data/bpe_tokenizer.h"
#include "data/byte_level.h"
#include "data/unicode_text.h"
#include "data/word_split.h"
#include "process_dir.h"

namespace gpudays::data {
namespace {

std::vector<std::string> words_of(const std::string& text, WordSplit split = WordSplit::kGpt2) {
  std::vector<ByteSpan> spans;
  split_words(split, text, spans);
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

std::vector<std::string> llama3_words(const std::string& text) {
  return words_of(text, WordSplit::kLlama3);
}

TEST(DataWordSplit, Llama3ContractionsMatchInAnyCase) {
  EXPECT_EQ(llama3_words("I'M HERE'S it'Sam x'\u017Fa"),
            (Words{"I", "'M", " HERE", "'S", " it", "'S", "am", " x", "'\u017F", "a"}));
  EXPECT_EQ(llama3_words("YOU'RE we'Ve THEY'LL I'D 'LL"),
            (Words{"YOU", "'RE", " we", "'Ve", " THEY", "'LL", " I", "'D", " '", "LL"}));
}

TEST(DataWordSplit, Llama3TakesDigitsThreeAtATimeAndQwen2OneAtATime) {
  EXPECT_EQ(llama3_words("1234567 12 x1"), (Words{"123", "456", "7", " ", "12", " x", "1"}));
  EXPECT_EQ(words_of("1234 x1", WordSplit::kQwen2), (Words{"1", "2", "3", "4", " x", "1"}));
  EXPECT_EQ(llama3_words("\u0661\u0662\u0663\u0664\u00B2"),  // Arabic-Indic digits, superscript 2
            (Words{"\u0661\u0662\u0663", "\u0664\u00B2"}));
}

TEST(DataWordSplit, Llama3NewlinesWhitespaceAndLeads) {
  EXPECT_EQ(llama3_words("a\n\n\nb"), (Words{"a", "\n\n\n", "b"}));
  EXPECT_EQ(llama3_words("x  \n  y"), (Words{"x", "  \n", " ", " y"}));  // \s*[\r\n]+ first
  EXPECT_EQ(llama3_words("a\r\n\r\n"), (Words{"a", "\r\n\r\n"}));
  EXPECT_EQ(llama3_words("x   "), (Words{"x", "   "}));  // trailing whitespace stays whole
  EXPECT_EQ(llama3_words("hello.world \tword  !!x"),
            (Words{"hello", ".world", " ", "\tword", " ", " !!", "x"}));
  EXPECT_EQ(llama3_words("!!!\n\nx ?\r\n"), (Words{"!!!\n\n", "x", " ?\r\n"}));
  EXPECT_EQ(llama3_words(" \u00A0word\u3000\u3000z"),
            (Words{" ", "\u00A0word", "\u3000", "\u3000z"}));
  EXPECT_EQ(llama3_words(""), Words{});
}

TEST(DataWordSplit, KnowsThePatternsByTheirExactStrings) {
  const std::string llama3 =
      R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
  EXPECT_EQ(word_split_of_pattern(llama3), WordSplit::kLlama3);
  std::string qwen2 = llama3;
  qwen2.replace(qwen2.find("{1,3}"), 5, "");
  EXPECT_EQ(word_split_of_pattern(qwen2), WordSplit::kQwen2);
  EXPECT_EQ(
      word_split_of_pattern(
          R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re"),
      WordSplit::kGpt2);
  EXPECT_EQ(word_split_of_pattern(llama3 + " "), std::nullopt);
  EXPECT_EQ(word_split_of_pattern(R"re(\s+)re"), std::nullopt);
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

// A SentencePiece-style model: <unk> <s> </s> = 0 1 2, <0x00>..<0xFF> = 3..258, then characters
// and the merges (▁ a), (▁ b).
BpeModelOptions sentencepiece_model(bool byte_fallback, bool fuse_unk) {
  BpeModelOptions model;
  model.vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) model.vocab[fmt::format("<0x{:02X}>", b)] = 3 + b;
  const std::string mark = "\u2581";
  model.vocab.insert({{mark, 259}, {"a", 260}, {"b", 261}, {mark + "a", 262}, {mark + "b", 263}});
  model.merges = {{mark, "a"}, {mark, "b"}};
  model.unk_id = 0;
  model.fuse_unk = fuse_unk;
  model.byte_level = false;
  model.byte_fallback = byte_fallback;
  return model;
}

std::vector<int64_t> encode(const BpeTokenizer& tok,
                            const std::string& text,
                            TextStart start = TextStart::kStart) {
  std::vector<int64_t> ids;
  tok.encode(text, ids, start);
  return ids;
}

// Llama-2's form: Prepend("▁"), Replace(" " -> "▁"), no pre-tokenizer (the text is one word).
TokenizerSettings llama2_settings() {
  TokenizerSettings llama2;
  llama2.normalizer = {{NormalizerStep::Kind::kPrepend, NormalForm::kNfc, "\u2581", ""},
                       {NormalizerStep::Kind::kReplace, NormalForm::kNfc, " ", "\u2581"}};
  llama2.split = WordSplit::kNone;
  llama2.added_tokens = {{"<s>", 1, false, true}};
  return llama2;
}

TokenizerSettings metaspace_settings(Metaspace::Prepend prepend, bool split) {
  TokenizerSettings settings;
  settings.metaspace = Metaspace{"\u2581", prepend, split};
  settings.added_tokens = {{"<s>", 1, false, true}};
  return settings;
}

using Ids = std::vector<int64_t>;

TEST(DataBpe, SentencePieceStyleFallsBackToBytes) {
  const TokenizerSettings llama2 = llama2_settings();
  const BpeTokenizer tok(llama2, sentencepiece_model(/*byte_fallback=*/true, /*fuse_unk=*/true));
  EXPECT_EQ(encode(tok, "a b \u00E9"), (Ids{262, 263, 259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(encode(tok, "<s>a <s> b"), (Ids{1, 262, 259, 1, 259, 263}));  // "▁" before each piece
  const BpeTokenizer unknown(llama2, sentencepiece_model(/*byte_fallback=*/false, true));
  EXPECT_EQ(encode(unknown, "\u00E9\u00E9 a"), (Ids{259, 0, 262}));  // one fused <unk>
  const BpeTokenizer unfused(llama2, sentencepiece_model(false, /*fuse_unk=*/false));
  EXPECT_EQ(encode(unfused, "\u00E9\u00E9 a"), (Ids{259, 0, 0, 262}));
}

TEST(DataBpe, MetaspacePrependsPerSchemeAndSplitsAtEachMark) {
  const TokenizerSettings first = metaspace_settings(Metaspace::Prepend::kFirst, /*split=*/true);
  const BpeTokenizer tok(first, sentencepiece_model(true, true));
  EXPECT_EQ(encode(tok, "a b"), (Ids{262, 263}));
  EXPECT_EQ(encode(tok, "<s>a b"), (Ids{1, 260, 263}));  // not the text's first piece: no "▁"
  EXPECT_EQ(encode(tok, " a"), (Ids{262}));              // starts with "▁" already
  TokenizerSettings always = first;
  always.metaspace->prepend = Metaspace::Prepend::kAlways;
  EXPECT_EQ(encode(BpeTokenizer(always, sentencepiece_model(true, true)), "<s>a  b"),
            (Ids{1, 262, 259, 263}));
}

// A text cut where splits_at allows goes on as a continuation: no Prepend (" b" is "▁b", not
// "▁▁b") and no Metaspace "first" mark before its first part; after an added token as always.
TEST(DataBpe, AContinuationGetsNeitherPrependNorTheFirstMark) {
  const BpeTokenizer llama2(llama2_settings(), sentencepiece_model(true, true));
  EXPECT_EQ(encode(llama2, " b"), (Ids{259, 263}));
  EXPECT_EQ(encode(llama2, " b", TextStart::kContinuation), (Ids{263}));
  EXPECT_EQ(encode(llama2, "b<s>a", TextStart::kContinuation), (Ids{261, 1, 262}));
  const BpeTokenizer first(metaspace_settings(Metaspace::Prepend::kFirst, /*split=*/false),
                           sentencepiece_model(true, true));
  EXPECT_EQ(encode(first, "a"), (Ids{262}));
  EXPECT_EQ(encode(first, "a", TextStart::kContinuation), (Ids{260}));
  const BpeTokenizer always(metaspace_settings(Metaspace::Prepend::kAlways, /*split=*/false),
                            sentencepiece_model(true, true));
  EXPECT_EQ(encode(always, "a", TextStart::kContinuation),
            (Ids{262}));  // as tokenizers: each piece
}

// sentencepiece_model() with "a▁" (264) merged first: it joins a word's "a" to the "▁" after it.
BpeModelOptions joining_model(bool byte_fallback) {
  BpeModelOptions model = sentencepiece_model(byte_fallback, /*fuse_unk=*/true);
  model.vocab["a\u2581"] = 264;
  model.merges.insert(model.merges.begin(), {"a", "\u2581"});
  return model;
}

// The ids of `text` cut at byte `at` into a start and a continuation.
Ids encode_cut(const BpeTokenizer& tok, const std::string& text, size_t at) {
  Ids ids = encode(tok, text.substr(0, at));
  const Ids rest = encode(tok, text.substr(at), TextStart::kContinuation);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

// In one word (Llama-2's form, Metaspace without split) a cut before a space is exact only after a
// character no merge joins to "▁"; with split the "▁" starts a word, so anywhere.
TEST(DataBpe, OneWordKindsCutOnlyWhereNoMergeJoinsTheSpace) {
  const std::string text = "ba bb ab bbbbbb";  // cuts at 2 ("ba| bb"), 5 ("bb| ab")
  const BpeTokenizer llama2(llama2_settings(), joining_model(/*byte_fallback=*/true));
  EXPECT_FALSE(llama2.splits_at(text, 2));
  EXPECT_NE(encode_cut(llama2, text, 2), encode(llama2, text));  // "a▁" would be lost there
  EXPECT_TRUE(llama2.splits_at(text, 5));
  EXPECT_EQ(encode_cut(llama2, text, 5), encode(llama2, text));
  const BpeTokenizer one_word(metaspace_settings(Metaspace::Prepend::kFirst, /*split=*/false),
                              joining_model(true));
  EXPECT_FALSE(one_word.splits_at(text, 2));
  EXPECT_TRUE(one_word.splits_at(text, 5));
  const BpeTokenizer split(metaspace_settings(Metaspace::Prepend::kFirst, /*split=*/true),
                           joining_model(true));
  EXPECT_TRUE(split.splits_at(text, 2));
  EXPECT_EQ(encode_cut(split, text, 2), encode(split, text));
  // The plain model merges nothing into "▁": a cut after any letter it knows.
  const BpeTokenizer plain(llama2_settings(), sentencepiece_model(true, true));
  EXPECT_TRUE(plain.splits_at(text, 2));
  EXPECT_TRUE(plain.splits_at("bc bb ab bbbbbb", 2));  // "c": its byte tokens
  const BpeTokenizer unknown(llama2_settings(), sentencepiece_model(/*byte_fallback=*/false, true));
  EXPECT_FALSE(unknown.splits_at("bc bb ab bbbbbb", 2));  // "c": <unk>, which may fuse
  EXPECT_TRUE(unknown.splits_at(text, 2));
}

// What keeps a one-word kind whole: ignore_merges, a normal form after the Replace; and a
// normalized added token near the cut in the normalized text ("▁b▁a" over "b| a").
TEST(DataBpe, OneWordKindsAreNotCutWhereTheRuleCannotProveIt) {
  const std::string text = "ba bb ab bbbbbb";
  BpeModelOptions whole_words = sentencepiece_model(true, true);
  whole_words.ignore_merges = true;
  EXPECT_FALSE(BpeTokenizer(llama2_settings(), whole_words).splits_at(text, 5));
  TokenizerSettings nfc_after = llama2_settings();
  nfc_after.normalizer.push_back({});  // NFC
  EXPECT_FALSE(BpeTokenizer(nfc_after, sentencepiece_model(true, true)).splits_at(text, 5));
  TokenizerSettings nfc_before = llama2_settings();
  nfc_before.normalizer.insert(nfc_before.normalizer.begin(), NormalizerStep{});
  EXPECT_TRUE(BpeTokenizer(nfc_before, sentencepiece_model(true, true)).splits_at(text, 5));
  TokenizerSettings added = llama2_settings();
  added.added_tokens.push_back({"b a", 300, /*normalized=*/true, false});
  const BpeTokenizer tok(added, sentencepiece_model(true, true));
  const std::string spaced = "bb b ab bbbb bbbb bbbb bbbbbbbbbbbbbb";
  EXPECT_FALSE(tok.splits_at(spaced, 4));
  EXPECT_EQ(encode(tok, spaced)[2], 300);
  EXPECT_TRUE(tok.splits_at(spaced, 17));
}

// The committed Llama-2-format fixture (tests/data/kjv-genesis.py); the ids are `tokenizers`'.
TEST(DataBpe, ReadsTheLlamaFormatFixture) {
  const BpeTokenizer tok =
      BpeTokenizer::load(std::string(GPUDAYS_TEST_DATA_DIR) + "/kjv-genesis-llama-tokenizer.json");
  EXPECT_EQ(tok.vocab_size(), 512);
  EXPECT_EQ(tok.token_id("<unk>"), 0);
  EXPECT_EQ(tok.token_id("<s>"), 1);
  EXPECT_EQ(tok.token_id("</s>"), 2);
  EXPECT_EQ(encode(tok, "In the beginning God created the heaven and the earth."),
            (Ids{400, 300, 316, 422, 323, 300, 347, 356, 336, 303,
                 394, 327, 316, 320, 325, 485, 317, 316, 363, 261}));
  EXPECT_EQ(encode(tok, "\u65E5"), (Ids{311, 3 + 0xE6, 3 + 0x97, 3 + 0xA5}));  // "▁", then bytes
}

std::string load_error(const std::string& json) {
  const std::string path = (test::process_temp_dir().path() / "tok.json").string();
  std::ofstream(path) << json;
  try {
    BpeTokenizer::load(path);
  } catch (const InputError& e) {
    const std::string what = e.what();
    return what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : "(no path) " + what;
  }
  return std::string();
}

const std::string kModel = R"("model": {"type": "BPE", "vocab": {"a": 0}, "merges": []})";

TEST(DataBpe, LoadRefusesWhatItCannotReproduce) {
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "ByteLevel"}, )" + kModel + "}"), "");
  EXPECT_EQ(
      load_error(R"({"normalizer": {"type": "Lowercase"}, "pre_tokenizer": null, )" + kModel + "}"),
      "normalizer 'Lowercase' is not supported; valid: NFC, NFD, NFKC, NFKD, Prepend, "
      "Replace or a Sequence of them");
  EXPECT_EQ(
      load_error(
          R"({"normalizer": {"type": "Replace", "pattern": {"Regex": " +"}, "content": "_"}, )" +
          kModel + "}"),
      R"(normalizer Replace of {"Regex":" +"} is not supported; valid: a non-empty String)");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "Whitespace"}, )" + kModel + "}"),
            "pre-tokenizer 'Whitespace' is not supported; valid: ByteLevel, Sequence [Split, "
            "ByteLevel], Metaspace or none");
  EXPECT_EQ(
      load_error(
          R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []}})"),
      "BPE dropout is not supported (it makes tokenization random)");
  EXPECT_EQ(
      load_error(
          R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})"),
      "merge 0 ('a' 'b') names a token the vocabulary lacks");
  EXPECT_EQ(
      load_error(R"({"truncation": {"max_length": 8}, "pre_tokenizer": null, )" + kModel + "}"),
      "truncation is set, which is not supported (it changes the ids)");
  // The JSON library's faults in words, never its "[json.exception...]" text.
  EXPECT_EQ(load_error("{not json"),
            "tokenizer.json is not JSON (at line 1, column 3: invalid literal)");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "ByteLevel"}})"),
            "tokenizer.json has no 'model' key");
  EXPECT_EQ(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]}})"),
            "tokenizer.json has a number where a string belongs");
}

// Ids never narrow: 2^40 would become 0 in 32 bits, 2^31 negative; each is refused naming the
// token.
TEST(DataBpe, LoadRefusesIdsBeyondThirtyOneBits) {
  const std::string model_with = R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": )"
                                 R"({"type": "BPE", "vocab": {"a": 0, "b": ID}, "merges": []}})";
  const auto with_id = [&](const std::string& id) {
    std::string text = model_with;
    return load_error(text.replace(text.find("ID"), 2, id));
  };
  EXPECT_EQ(with_id("1099511627776"),
            "token 'b' has id 1099511627776, not an integer in [0, 2^31 - 1)");
  EXPECT_EQ(with_id("2147483648"), "token 'b' has id 2147483648, not an integer in [0, 2^31 - 1)");
  EXPECT_EQ(with_id("-1"), "token 'b' has id -1, not an integer in [0, 2^31 - 1)");
  EXPECT_EQ(with_id("1.5"), "token 'b' has id 1.5, not an integer in [0, 2^31 - 1)");
  EXPECT_EQ(with_id("1"), "");
  const std::string added = R"({"added_tokens": [{"id": 4294967296, "content": "<x>"}], )"
                            R"("pre_tokenizer": {"type": "ByteLevel"}, )" +
                            kModel + "}";
  EXPECT_EQ(load_error(added), "token '<x>' has id 4294967296, not an integer in [0, 2^31 - 1)");
}

// A pre_tokenizer Sequence [Split(`split`), ByteLevel(`byte_level`)].
std::string split_file(const std::string& split, const std::string& byte_level) {
  return R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", )" + split +
         R"(}, {"type": "ByteLevel", )" + byte_level + "}]}, " + kModel + "}";
}

TEST(DataBpe, LoadReadsKnownSplitsAndRefusesOthers) {
  const std::string llama3 =
      R"("pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"})";
  const std::string mapping = R"("add_prefix_space": false, "use_regex": false)";
  EXPECT_EQ(
      load_error(split_file(llama3 + R"(, "behavior": "Isolated", "invert": false)", mapping)), "");
  EXPECT_EQ(load_error(split_file(
                R"("pattern": {"Regex": "\\p{L}+|\\s+"}, "behavior": "Isolated", "invert": false)",
                mapping)),
            R"(Split pattern {"Regex":"\\p{L}+|\\s+"} is not supported; valid: GPT-2's, )"
            "Llama-3's or Qwen2's Regex, exactly as their tokenizer.json files write it");
  EXPECT_EQ(load_error(split_file(
                R"("pattern": {"String": " "}, "behavior": "Isolated", "invert": false)", mapping)),
            R"(Split pattern {"String":" "} is not supported; valid: GPT-2's, Llama-3's or )"
            "Qwen2's Regex, exactly as their tokenizer.json files write it");
  EXPECT_EQ(load_error(split_file(llama3 + R"(, "behavior": "Removed", "invert": false)", mapping)),
            "Split behavior 'Removed' is not supported; valid: Isolated");
  EXPECT_EQ(load_error(split_file(llama3 + R"(, "behavior": "Isolated", "invert": true)", mapping)),
            "Split with invert is not supported");
  EXPECT_EQ(load_error(split_file(llama3 + R"(, "behavior": "Isolated", "invert": false)",
                                  R"("add_prefix_space": false, "use_regex": true)")),
            "a ByteLevel after a Split must have use_regex and add_prefix_space false");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": )"
                       R"("Whitespace"}, {"type": "ByteLevel"}]}, )" +
                       kModel + "}"),
            "pre-tokenizer Sequence [Whitespace, ByteLevel] is not supported; valid: [Split, "
            "ByteLevel]");
}

TEST(DataBpe, LoadRefusesSentencePieceStyleFilesItCannotReproduce) {
  const std::string fallback =
      R"("model": {"type": "BPE", "byte_fallback": true, "vocab": {"a": 0}, "merges": []})";
  EXPECT_EQ(load_error(R"({"pre_tokenizer": null, )" + fallback + "}"),
            "byte_fallback needs the 256 tokens <0x00> to <0xFF>; the vocabulary lacks <0x00>");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "ByteLevel"}, )" + fallback + "}"),
            "byte_fallback with a ByteLevel pre-tokenizer is not supported");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", )"
                       R"("prepend_scheme": "first", "split": false}, )" +
                       kModel + "}"),
            "");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", )"
                       R"("prepend_scheme": "sometimes"}, )" +
                       kModel + "}"),
            "Metaspace prepend_scheme 'sometimes' is not supported; valid: always, first, never");
  EXPECT_EQ(load_error(R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "__"}, )" +
                       kModel + "}"),
            "Metaspace replacement '__' is not one character");
}

}  // namespace
}  // namespace gpudays::data
