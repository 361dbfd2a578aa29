// Autocast as a scope (RAII), the one way the engine, the trainer's evaluation and activation
// checkpointing's recompute switch it: on entry the device's autocast is set to the precision's
// dtype; on exit the previous state returns and, when the outermost scope on this thread ends,
// autocast's cast cache is cleared, as torch.autocast's __exit__ does. The cache holds the
// low-precision copies of the weights; left filled, the next step would run on the copies of
// weights the optimizer has since updated. The switches and the nesting count are per thread (the
// CUDA backward's recompute runs on the autograd worker, in a scope of its own there); the cache
// is the process's.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>

#include "catalog/model_spec.h"

namespace gpudays {

class AutocastScope {
 public:
  // fp32: autocast off inside the scope; bf16/fp16: on, in that dtype.
  AutocastScope(c10::DeviceType device, Precision precision);
  // As recorded elsewhere (checkpointing's forward): on or off, in `dtype`.
  AutocastScope(c10::DeviceType device, bool enabled, at::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
  at::ScalarType was_dtype_;
};

// The autocast dtype of a mixed precision (bf16 or fp16); fp32 for kFp32.
at::ScalarType autocast_dtype(Precision precision);

}  // namespace gpudays
