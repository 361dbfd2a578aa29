// The Megatron-LM indexed format (data/megatron_index.h) and the packed token samples over it and
// over flat token files (data/samples.h): round trips, packing across documents, and one-line
// errors that name the file and the offset for every kind of corruption.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "common/error.h"
#include "data/megatron_index.h"
#include "data/samples.h"
#include "process_dir.h"

namespace gpudays::data {
namespace {

std::string temp_prefix(const std::string& name) {
  return (test::process_temp_dir().path() / name).string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Documents of 5, 3 and 9 tokens, written in `code`'s dtype; returns the prefix.
std::string write_dataset(const std::string& name, uint8_t code = 8) {
  const std::string prefix = temp_prefix(name);
  MegatronWriter writer(prefix, token_dtype_from_code(code, "", 0));
  writer.add_document({1, 2, 3, 4, 0});
  writer.add_document({5, 6, 0});
  writer.add_document({7, 8, 9, 10, 11, 12, 13, 14, 0});
  writer.finish();
  return prefix;
}

std::string error_of(const std::string& prefix, int64_t seq_len = 4) {
  try {
    open_token_samples(prefix, seq_len);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DataMegatron, WritesTheDocumentedLayout) {
  const std::string idx = read_bytes(write_dataset("layout") + ".idx");
  ASSERT_EQ(idx.size(), 34u + 3 * 4 + 3 * 8 + 4 * 8);
  EXPECT_EQ(idx.substr(0, 9), std::string("MMIDIDX\0\0", 9));
  uint64_t version, sequences, documents;
  std::memcpy(&version, idx.data() + 9, 8);
  std::memcpy(&sequences, idx.data() + 18, 8);
  std::memcpy(&documents, idx.data() + 26, 8);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(idx[17], 8);  // uint16
  EXPECT_EQ(sequences, 3u);
  EXPECT_EQ(documents, 4u);
  int64_t pointer2;
  std::memcpy(&pointer2, idx.data() + 34 + 12 + 16, 8);
  EXPECT_EQ(pointer2, (5 + 3) * 2);
}

TEST(DataMegatron, SamplesArePackedAcrossDocumentsInEveryDtype) {
  for (uint8_t code : {1, 2, 3, 4, 5, 8}) {
    const auto samples =
        open_token_samples(write_dataset("packed" + std::to_string(code), code), 4);
    // 17 tokens: samples [0,5), [4,9), [8,13), [12,17).
    ASSERT_EQ(samples->num_samples(), 4);
    EXPECT_EQ(samples->sample_tokens(), 5);
    std::vector<int64_t> out(5);
    samples->read_sample(1, out.data());
    EXPECT_EQ(out, (std::vector<int64_t>{0, 5, 6, 0, 7}));
    samples->read_sample(3, out.data());
    EXPECT_EQ(out, (std::vector<int64_t>{11, 12, 13, 14, 0}));
  }
  EXPECT_EQ(open_token_samples(write_dataset("limit1", 1), 4)->vocab_limit(), 256);
  EXPECT_EQ(open_token_samples(write_dataset("limit8", 8), 4)->vocab_limit(), 65536);
}

TEST(DataMegatron, FlatTokenFiles) {
  const std::string u16 = temp_prefix("flat.u16");
  std::string bytes;
  for (uint16_t t = 0; t < 11; ++t) bytes.append(reinterpret_cast<const char*>(&t), 2);
  write_bytes(u16, bytes);
  const auto samples = open_token_samples(u16, 5);
  ASSERT_EQ(samples->num_samples(), 2);
  std::vector<int64_t> out(6);
  samples->read_sample(1, out.data());
  EXPECT_EQ(out, (std::vector<int64_t>{5, 6, 7, 8, 9, 10}));
  const std::string u32 = temp_prefix("flat.u32");
  bytes.clear();
  for (uint32_t t = 70000; t < 70009; ++t) bytes.append(reinterpret_cast<const char*>(&t), 4);
  write_bytes(u32, bytes);
  const auto wide = open_token_samples(u32, 4);
  EXPECT_EQ(wide->num_samples(), 2);
  wide->read_sample(0, out.data());
  EXPECT_EQ(out[4], 70004);
  write_bytes(u32, bytes + "x");
  EXPECT_EQ(error_of(u32),
            u32 + ": offset 36: truncated; 37 bytes is not a whole number of 4-byte tokens");
}

TEST(DataMegatron, CorruptIndexNamesTheFileAndOffset) {
  const std::string good = read_bytes(write_dataset("good") + ".idx");
  const std::string prefix = write_dataset("bad");
  const std::string idx = prefix + ".idx";
  auto corrupt = [&](std::string bytes) {
    write_bytes(idx, bytes);
    return error_of(prefix);
  };
  EXPECT_EQ(corrupt(good.substr(0, 20)),
            idx + ": offset 20: truncated: 20 bytes, the header alone is 34");
  std::string magic = good;
  magic[3] = 'X';
  EXPECT_EQ(corrupt(magic),
            idx + ": offset 0: wrong magic; not a Megatron-LM index (expected MMIDIDX\\0\\0)");
  std::string version = good;
  version[9] = 2;
  EXPECT_EQ(corrupt(version), idx + ": offset 9: version 2 (only 1 is defined)");
  std::string dtype = good;
  dtype[17] = 6;
  EXPECT_EQ(corrupt(dtype), idx + ": offset 17: dtype code 6 is a float type, not tokens");
  dtype[17] = 42;
  EXPECT_EQ(corrupt(dtype), idx + ": offset 17: unknown dtype code 42; valid: 1 to 8");
  EXPECT_NE(corrupt(good.substr(0, good.size() - 8)).find(idx + ": offset"), std::string::npos);
  std::string huge = good;
  huge[25] = 0x7f;  // an absurd sequence count
  EXPECT_NE(corrupt(huge).find(idx + ": offset 18: "), std::string::npos);
  std::string pointer = good;
  const int64_t past = 1000;
  std::memcpy(pointer.data() + 34 + 12 + 8, &past, 8);  // sequence 1 starts past the .bin's end
  EXPECT_EQ(corrupt(pointer),
            idx + ": offset 54: sequence 1 (3 tokens at byte 1000 of " + prefix +
                ".bin) lies outside its 34-byte file");
  std::string length = good;
  const int32_t negative = -1;
  std::memcpy(length.data() + 34, &negative, 4);
  EXPECT_EQ(corrupt(length), idx + ": offset 34: sequence 0 has negative length -1");
  std::string documents = good;
  const int64_t beyond = 9;
  std::memcpy(documents.data() + 34 + 36 + 16, &beyond, 8);
  EXPECT_EQ(corrupt(documents),
            idx + ": offset 86: document index 2 is 9; indices rise from 0 to 3");
}

TEST(DataMegatron, TruncatedBinIsAnError) {
  const std::string prefix = write_dataset("short");
  const std::string bin = read_bytes(prefix + ".bin");
  write_bytes(prefix + ".bin", bin.substr(0, bin.size() - 2));
  EXPECT_EQ(error_of(prefix),
            prefix + ".idx: offset 62: sequence 2 (9 tokens at byte 16 of " + prefix +
                ".bin) lies outside its 32-byte file");
  EXPECT_NE(error_of(temp_prefix("missing")).find("cannot open"), std::string::npos);
}

TEST(DataMegatron, NegativeTokensAndTinyFilesAreErrors) {
  const std::string prefix = temp_prefix("signed");
  MegatronWriter writer(prefix, token_dtype_from_code(3, "", 0));
  EXPECT_THROW(writer.add_document({1, -2}), InputError);
  EXPECT_THROW(writer.add_document({40000}), InputError);
  writer.add_document({1, 2, 3});
  writer.finish();
  EXPECT_EQ(error_of(prefix, 2), "");
  EXPECT_EQ(error_of(prefix, 3), prefix + " holds 3 tokens, too few for one sample of 3 + 1");
  std::string bin = read_bytes(prefix + ".bin");
  bin[2] = '\xff';
  bin[3] = '\xff';
  write_bytes(prefix + ".bin", bin);
  const auto samples = open_token_samples(prefix, 2);
  std::vector<int64_t> out(3);
  try {
    samples->read_sample(0, out.data());
    FAIL() << "a negative token was read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), prefix + ".bin: offset 2: negative token id -1");
  }
}

}  // namespace
}  // namespace gpudays::data
