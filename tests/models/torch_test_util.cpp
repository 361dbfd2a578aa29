// Test helpers for gpudays_torch_tests.
#include "torch_test_util.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/max.h>

#include <filesystem>
#include <stdexcept>

#include "../process_dir.h"
#include "catalog/model_loader.h"

namespace gpudays::test {

ModelSpec tiny_spec(const std::string& name) {
  return load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/" + name + ".toml");
}

std::string fixture_path(const std::string& case_name, const std::string& file) {
  const std::filesystem::path path = std::filesystem::path(GPUDAYS_FIXTURE_DIR) / case_name / file;
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("parity fixture " + path.string() +
                             " is missing: run `make test` (or `make fixtures`), which generates"
                             " it with tests/models/make_fixtures.py");
  }
  return path.string();
}

std::string ref_python() {
  return GPUDAYS_REF_PYTHON;
}
std::string source_dir() {
  return GPUDAYS_SOURCE_DIR;
}

std::string scratch_dir(const std::string& name) {
  // Under the build tree (exports and checkpoints can be large), not the temporary folder.
  static const ProcessDir kScratch(GPUDAYS_SCRATCH_DIR, "torch-tests");
  return kScratch.fresh_dir(name);
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kCPU, at::kDouble) - b.to(at::kCPU, at::kDouble)).abs().max().item<double>();
}

double max_abs(const at::Tensor& a) {
  return a.to(at::kCPU, at::kDouble).abs().max().item<double>();
}

double max_rel_diff(const at::Tensor& a, const at::Tensor& ref) {
  const double scale = ref.to(at::kCPU, at::kDouble).abs().max().item<double>();
  return max_abs_diff(a, ref) / (scale > 0 ? scale : 1.0);
}

}  // namespace gpudays::test
