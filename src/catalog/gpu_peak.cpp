// The matmul dtype's peak.
#include "catalog/gpu_peak.h"

namespace gpudays {

MatmulPeak matmul_peak(const GpuSpec& gpu, Precision precision, bool tf32_allowed) {
  const double tensor = gpu.matmul_ceiling_fraction;
  switch (precision) {
    case Precision::kFp16:
      return {"fp16", gpu.peak_fp16_tflops, tensor};
    case Precision::kBf16:
      return {"bf16", gpu.peak_bf16_tflops, tensor};
    case Precision::kFp32:
      break;
  }
  if (tf32_allowed && gpu.supports_tf32()) return {"tf32", gpu.peak_tf32_tflops, tensor};
  const double fp32 = gpu.fp32_matmul_ceiling_fraction;
  return {"fp32", gpu.peak_fp32_tflops, fp32 > 0.0 ? fp32 : tensor};
}

}  // namespace gpudays
