// Bad model and GPU files: each gets an InputError naming the file, table and field.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "catalog/gpu_loader.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "test_util.h"

namespace gpudays {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string pythia_70m() { return read_file(test::catalog().model("pythia-70m").source_path); }

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

std::string load_error(const std::string& contents) {
  const std::string path = test::write_temp_file("model.toml", contents);
  try {
    load_model_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& contents, const std::string& needle) {
  const std::string error = load_error(contents);
  EXPECT_NE(error.find(needle), std::string::npos) << "error was: '" << error << "'";
}

TEST(ModelFile, UserFileLoadsAnywhere) {
  const std::string path = test::write_temp_file("mine.toml",
                                                 replace(pythia_70m(), "pythia-70m\"", "mine\""));
  EXPECT_EQ(load_model_file(path).name, "mine");
}

TEST(ModelFile, HeadsNotDividingWidth) {
  expect_error(replace(pythia_70m(), "n_heads = 8", "n_heads = 7"), "[arch]: n_heads");
}

TEST(ModelFile, UnknownFamilyNamesTheChoices) {
  expect_error(replace(pythia_70m(), "family = \"gpt_neox\"", "family = \"llama\""), "gpt_neox");
}

TEST(ModelFile, MissingKey) {
  expect_error(replace(pythia_70m(), "d_model = 512\n", ""), "[arch]: d_model: missing");
}

TEST(ModelFile, UnknownKeyIsATypo) {
  expect_error(replace(pythia_70m(), "d_model = 512", "d_model = 512\nd_modle = 4"),
               "d_modle: unknown key");
}

TEST(ModelFile, WrongType) {
  expect_error(replace(pythia_70m(), "seq_len = 2048", "seq_len = \"long\""),
               "seq_len: must be an integer");
}

TEST(ModelFile, BadPrecision) {
  expect_error(replace(pythia_70m(), "precision = \"fp16\"", "precision = \"fp8\""),
               "precision");
}

TEST(ModelFile, SyntaxErrorHasALine) {
  expect_error("name = \"x\"\nfamily = \n", "model.toml:2");
}

TEST(ModelFile, SequenceLongerThanPositions) {
  expect_error(replace(pythia_70m(), "seq_len = 2048", "seq_len = 4096"), "max_position");
}

TEST(GpuFile, NegativeBandwidthIsRejected) {
  const std::string a100 = read_file(test::catalog().gpu("a100").source_path);
  const std::string path = test::write_temp_file(
      "gpu.toml", replace(a100, "bandwidth_gb_per_s = 2039.0", "bandwidth_gb_per_s = -1"));
  try {
    load_gpu_file(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth_gb_per_s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpudays
