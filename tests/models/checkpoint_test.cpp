// Safetensors reader/writer and checkpoint loading: round trips for every dtype, malformed files
// rejected with the file and tensor named, and model/file mismatches listed all at once.
#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/output_files.h"
#include "models/checkpoint.h"
#include "models/layers.h"
#include "models/safetensors.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

std::string write_raw(const std::string& name,
                      uint64_t header_len,
                      const std::string& header,
                      size_t data_bytes) {
  const std::string path = test::scratch_dir("raw") + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&header_len), 8);
  out << header << std::string(data_bytes, '\0');
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The reader's error for a file of `header` and `data_bytes` zero bytes of data.
std::string header_error(const std::string& name, const std::string& header, size_t data_bytes) {
  return error_of([&] { SafetensorsReader r(write_raw(name, header.size(), header, data_bytes)); });
}

TEST(Safetensors, RoundTripsEveryDtypeShapeAndMetadata) {
  const std::string path = test::scratch_dir("st") + "/t.safetensors";
  NamedTensors tensors;
  for (const auto dtype : {at::kDouble,
                           at::kFloat,
                           at::kHalf,
                           at::kBFloat16,
                           at::kLong,
                           at::kInt,
                           at::kShort,
                           at::kChar,
                           at::kByte,
                           at::kBool}) {
    tensors.emplace_back(std::string("t_") + c10::toString(dtype),
                         at::arange(24).reshape({2, 3, 4}).to(dtype));
  }
  tensors.emplace_back("scalar", at::randn({}));
  tensors.emplace_back("empty", at::randn({0, 5}));
  tensors.emplace_back("strided", at::randn({4, 6}).t());  // non-contiguous input
  write_safetensors(path, tensors, {{"note", "hello"}});
  uint64_t header_len = 0;
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(&header_len), 8);
  EXPECT_EQ((8 + header_len) % 8, 0u) << "the data section must start 8-byte aligned";

  const SafetensorsReader reader(path);
  EXPECT_EQ(reader.metadata().at("format"), "pt");
  EXPECT_EQ(reader.metadata().at("note"), "hello");
  ASSERT_EQ(reader.entries().size(), tensors.size());
  for (const auto& [name, tensor] : tensors) {
    const at::Tensor back = reader.read(name);
    EXPECT_EQ(back.scalar_type(), tensor.scalar_type()) << name;
    EXPECT_EQ(back.sizes(), tensor.sizes()) << name;
    EXPECT_TRUE(at::equal(back, tensor)) << name;
  }
}

TEST(Safetensors, RejectsMalformedFilesNamingTheProblem) {
  EXPECT_NE(error_of([] { SafetensorsReader("/nonexistent.safetensors"); }).find("cannot open"),
            std::string::npos);
  const std::string huge = write_raw("huge.st", 1 << 20, "{}", 0);
  EXPECT_NE(error_of([&] { SafetensorsReader r(huge); }).find("does not fit"), std::string::npos);
  const std::string not_json = write_raw("nj.st", 4, "{abc", 0);
  EXPECT_NE(error_of([&] { SafetensorsReader r(not_json); }).find("not JSON"), std::string::npos);
  const std::string h1 = R"({"w":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NE(header_error("dt.st", h1, 8).find("tensor 'w': unknown dtype 'F33'"),
            std::string::npos);
  const std::string h2 = R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  EXPECT_NE(header_error("sz.st", h2, 8).find("8 bytes for a tensor of 12 bytes"),
            std::string::npos);
  const std::string h3 = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  EXPECT_NE(header_error("oob.st", h3, 8).find("outside the 8-byte data section"),
            std::string::npos);
  const std::string h4 = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_NE(header_error("ov.st", h4, 12).find("overlap"), std::string::npos);
  // Found by the safetensors fuzz target: 2^62 x 4 floats wrapped to 0 bytes, matched its empty
  // range, and the read ended in LibTorch's "storage size calculation overflowed".
  const std::string h5 =
      R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})";
  EXPECT_NE(header_error("wrap.st", h5, 0)
                .find("tensor 'w': shape [4611686018427387904, 4] is too large"),
            std::string::npos);
  // Found by the same target under UBSan: an offset of 6.46e20 was converted from a double to
  // uint64_t, which is undefined. Fractions, exponents and negatives are refused as such.
  const std::string h6 = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,6.46117e+20]}})";
  EXPECT_NE(header_error("dbl.st", h6, 8)
                .find("data_offsets holds 6.46117e+20, not an integer of 64 bits"),
            std::string::npos);
  const std::string h7 = R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})";
  EXPECT_NE(header_error("frac.st", h7, 8).find("shape holds 2.5"), std::string::npos);
  const std::string h8 = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})";
  EXPECT_NE(header_error("neg.st", h8, 8).find("must not be negative"), std::string::npos);
}

// A failed write is an I/O error (exit 1 at the command line), not bad input (exit 2), and
// leaves the file that was there: the tensors go to a temporary file renamed over it.
TEST(Safetensors, AFailedWriteIsAnIoErrorAndLeavesTheOldFile) {
  const NamedTensors tensors = {{"w", at::arange(6, at::kFloat)}};
  if (std::filesystem::exists("/dev/full")) {
    EXPECT_THROW(write_safetensors("/dev/full", tensors), IoError);
  }
  EXPECT_THROW(write_safetensors("/nonexistent-gpudays/m.safetensors", tensors), IoError);
  const std::string dir = test::scratch_dir("atomic");
  const std::string path = dir + "/m.safetensors";
  write_safetensors(path, tensors);
  const auto before = std::filesystem::file_size(path);
  // A duplicate name is refused before anything is written; the old file stays whole.
  EXPECT_THROW(write_safetensors(path, {tensors[0], tensors[0]}), InputError);
  EXPECT_EQ(std::filesystem::file_size(path), before);
  write_safetensors(path, {{"w", at::arange(12, at::kFloat)}});
  EXPECT_EQ(SafetensorsReader(path).read("w").numel(), 12);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "m.safetensors") << "a temporary file left behind";
  }
}

// Two layers with HF-style names: "proj.weight", "proj.bias", "norm.weight", "norm.bias".
struct TwoLayers : torch::nn::Module {
  TwoLayers() {
    register_module("proj", Linear(3, 2, /*bias=*/true, at::TensorOptions()));
    register_module("norm", LayerNorm(2, 1e-5, at::TensorOptions()));
  }
};

TEST(Checkpoint, SaveThenLoadRestoresEveryTensor) {
  const std::string path = test::scratch_dir("ckpt") + "/m.safetensors";
  TwoLayers a;
  TwoLayers b;
  save_safetensors(a, path);
  load_safetensors(b, path);
  const NamedTensors sa = named_state(a);
  const NamedTensors sb = named_state(b);
  ASSERT_EQ(sa.size(), 4u);
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].first, sb[i].first);
    EXPECT_TRUE(at::equal(sa[i].second, sb[i].second)) << sa[i].first;
    EXPECT_TRUE(sb[i].second.requires_grad()) << "loading must keep parameters trainable";
  }
}

TEST(Checkpoint, ListsEveryMissingUnexpectedAndMisshapedTensorAndChangesNothing) {
  const std::string path = test::scratch_dir("bad") + "/m.safetensors";
  write_safetensors(path,
                    {{"proj.weight", at::randn({2, 4})},  // wrong shape
                     {"norm.weight", at::randn({2})},
                     {"extra.one", at::randn({1})},
                     {"extra.two", at::randn({1})}});
  TwoLayers m;
  const at::Tensor before = named_state(m)[0].second.clone();
  const std::string error = error_of([&] { load_safetensors(m, path); });
  EXPECT_NE(error.find("missing [proj.bias, norm.bias]"), std::string::npos) << error;
  EXPECT_NE(error.find("unexpected [extra.one, extra.two]"), std::string::npos) << error;
  EXPECT_NE(error.find("proj.weight is [2, 4], model needs [2, 3]"), std::string::npos) << error;
  EXPECT_TRUE(at::equal(named_state(m)[0].second, before)) << "a failed load must change nothing";
}

TEST(Checkpoint, AliasesMapFileNamesToModuleNames) {
  const std::string path = test::scratch_dir("alias") + "/m.safetensors";
  TwoLayers a;
  NamedTensors renamed = named_state(a);
  renamed[0].first = "lm_head.weight";
  write_safetensors(path, renamed);
  TwoLayers b;
  EXPECT_THROW(load_safetensors(b, path), InputError);
  LoadOptions aliased;
  aliased.aliases = {{"lm_head.weight", "proj.weight"}};
  load_safetensors(b, path, aliased);
  EXPECT_TRUE(at::equal(named_state(b)[0].second, named_state(a)[0].second));
}

}  // namespace
}  // namespace gpudays::models
