// Helpers for the LibTorch tests: the tiny catalog files under tests/models/data, the parity
// fixtures made by make_fixtures.py, tensor comparisons and scratch directories.
#pragma once

#include <ATen/Context.h>
#include <ATen/core/Tensor.h>

#include <string>

#include "catalog/model_spec.h"

namespace gpudays::test {

ModelSpec tiny_spec(const std::string& name);  // tests/models/data/<name>.toml

// <fixture dir>/<case>/<file>; fails the calling test (via exception) when fixtures are missing.
std::string fixture_path(const std::string& case_name, const std::string& file);

// Tests named *_CUDA call this first: it skips them on machines without a GPU.
#define GPUDAYS_SKIP_WITHOUT_CUDA() \
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device"

std::string ref_python();  // Python of the reference environment (torch, transformers)
std::string source_dir();  // the repository root

// A fresh empty directory under the build tree, unique per process and name; removed with the
// process's scratch directory when the process exits (process_dir.h).
std::string scratch_dir(const std::string& name);

// Comparisons in fp64 on the CPU, whatever the tensors' devices and dtypes.
double max_abs_diff(const at::Tensor& a, const at::Tensor& b);
double max_abs(const at::Tensor& a);
// max |a - ref| / max |ref|: relative to the tensor's scale, so near-zero entries do not dominate.
double max_rel_diff(const at::Tensor& a, const at::Tensor& ref);

}  // namespace gpudays::test
