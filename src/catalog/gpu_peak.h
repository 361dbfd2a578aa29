// A device's dense peak for the dtype its matmuls run in: fp16, bf16, or fp32 — as TF32 where
// TF32 is allowed and the GPU has it. The one place a precision picks a datasheet peak.
#pragma once

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"

namespace gpudays {

struct MatmulPeak {
  const char* dtype = "fp32";     // "fp16", "bf16", "tf32" or "fp32"
  double tflops = 0.0;            // 0: not known (a host CPU's fp16)
  double ceiling_fraction = 0.0;  // the best measured matmul of that dtype, a fraction of tflops
};

MatmulPeak matmul_peak(const GpuSpec& gpu, Precision precision, bool tf32_allowed);

}  // namespace gpudays
