// The fitted constants' table and their access by name.
#include "plan/fitted_constants.h"

#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

constexpr std::string_view kMatmulPrefix = "matmul_fraction_of_ceiling.";

// The field a constant is stored in, and the factor from the constant's unit to the field's.
struct Field {
  double* value = nullptr;
  double unit = 1.0;
};

Field field_of(PlanOptions& o, const std::string& name) {
  if (name.rfind(kMatmulPrefix, 0) == 0) {
    auto& by_generation = o.device.matmul_fraction_of_ceiling;
    const std::string generation = name.substr(kMatmulPrefix.size());
    return {&by_generation.emplace(generation, 1.0).first->second};  // absent: 1.0
  }
  if (name == "matmul_half_dim") return {&o.device.matmul_half_dim};
  if (name == "fused_attention_scale") return {&o.device.fused_attention_scale};
  if (name == "memory_efficiency") return {&o.device.memory_efficiency};
  if (name == "eager_dispatch_us") return {&o.device.eager_dispatch_s, 1e-6};
  if (name == "kernel_overhead_us") return {&o.device.kernel_overhead_s, 1e-6};
  if (name == "overlap_fraction") return {&o.time.overlap_fraction};
  if (name == "depthwise_passes") return {&o.device.depthwise_passes};
  throw std::logic_error("fitted constant without a field: " + name);
}

const FittedConstant& find_constant(const std::string& name) {
  std::vector<std::string> names;
  for (const FittedConstant& c : fitted_constants()) {
    if (c.name == name) return c;
    names.push_back(c.name);
  }
  throw InputError(
      fmt::format("unknown calibration constant '{}'; valid: {}", name, join_choices(names)));
}

}  // namespace

const std::vector<FittedConstant>& fitted_constants() {
  static const std::vector<FittedConstant> kConstants = {
      {"matmul_fraction_of_ceiling.sm_80",
       0.5,
       1.0,
       0.025,
       "A100: achieved fraction of the measured matmul ceiling by training GEMMs"},
      {"matmul_fraction_of_ceiling.sm_86",
       0.5,
       1.0,
       0.025,
       "GA102 (RTX 3090, A6000, A40): achieved fraction of the matmul ceiling"},
      {"matmul_fraction_of_ceiling.sm_90",
       0.5,
       1.0,
       0.025,
       "H100/H200: achieved fraction of the matmul ceiling"},
      {"matmul_half_dim",
       32.0,
       256.0,
       8.0,
       "GEMM dimension at which the shape factor x / (x + h) halves efficiency"},
      {"fused_attention_scale",
       0.8,
       1.2,
       0.02,
       "multiplies FlashAttention-2's midpoints (0.70 forward, 0.59 backward of the ceiling); "
       "the bounds keep both within the paper's ranges"},
      {"memory_efficiency",
       0.3,
       0.9,
       0.025,
       "achieved fraction of memory bandwidth by memory-bound operations (non-GEMM time)"},
      {"eager_dispatch_us",
       2.0,
       20.0,
       1.0,
       "host time per kernel launched from C++ (the engine; autograd's backward), microseconds"},

      {"kernel_overhead_us",
       0.0,
       10.0,
       0.5,
       "GPU time per memory-bound kernel beyond its bytes (launch latency, ramp and tail), "
       "microseconds"},
      {"overlap_fraction",
       0.5,
       1.0,
       0.05,
       "fraction of concurrent compute that hides data-parallel communication"},
      {"depthwise_passes",
       1.0,
       4.0,
       0.25,
       "a GPU's depthwise 7x7 convolution: passes over its input and output each way (1: the "
       "least traffic; no public measurement of cuDNN's kernels)"},
  };
  return kConstants;
}

double constant_value(const PlanOptions& options, const std::string& name) {
  find_constant(name);
  PlanOptions copy = options;  // a matmul fraction's look-up inserts its default
  const Field f = field_of(copy, name);
  return *f.value / f.unit;
}

void set_constant(PlanOptions& options, const std::string& name, double value) {
  const FittedConstant& c = find_constant(name);
  if (!(value >= c.min && value <= c.max)) {
    throw InputError(
        fmt::format("calibration constant '{}' = {} is outside its physical range "
                    "[{:g}, {:g}]",
                    name,
                    value,
                    c.min,
                    c.max));
  }
  const Field f = field_of(options, name);
  *f.value = value * f.unit;
}

void apply_calibration(const CalibrationFile& file, PlanOptions& options) {
  for (const CalibrationValue& v : file.values) {
    try {
      const FittedConstant& c = find_constant(v.name);
      if (v.min != c.min || v.max != c.max) {
        throw InputError(
            fmt::format("constant '{}': bounds [{:g}, {:g}] differ from the "
                        "planner's [{:g}, {:g}]",
                        v.name,
                        v.min,
                        v.max,
                        c.min,
                        c.max));
      }
      set_constant(options, v.name, v.value);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", file.path, e.what()));
    }
  }
}

PlanOptions calibrated_plan_options(const CalibrationFile& file) {
  PlanOptions options;
  apply_calibration(file, options);
  return options;
}

}  // namespace gpudays
