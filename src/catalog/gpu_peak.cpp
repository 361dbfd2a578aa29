// The matmul dtype's peak.
#include "catalog/gpu_peak.h"

namespace gpudays {

MatmulPeak matmul_peak(const GpuSpec& gpu, Precision precision, bool tf32_allowed) {
  switch (precision) {
    case Precision::kFp16:
      return {"fp16", gpu.peak_fp16_tflops};
    case Precision::kBf16:
      return {"bf16", gpu.peak_bf16_tflops};
    case Precision::kFp32:
      break;
  }
  if (tf32_allowed && gpu.supports_tf32()) return {"tf32", gpu.peak_tf32_tflops};
  return {"fp32", gpu.peak_fp32_tflops};
}

}  // namespace gpudays
