// Where a configuration's micro-step goes, operation by operation: each operation of the workload
// (plan/workload.h) on the device model, forward and backward, times how often it runs. The GPU's
// kernels alone (what a profiler's kernel view shows), before the host's launch queue, the
// recomputation of checkpointing, communication, the optimizer and any calibration from trials.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/planner.h"

namespace gpudays {

struct OpTime {
  std::string part;  // "stem", the repeated block's name ("layer", "block"), "head"
  std::string name;
  int64_t count = 1;          // how many times per micro-step (the block's repeats)
  double forward_s = 0.0;     // all of them, on the device
  double backward_s = 0.0;    // all of them, on the device
  double forward_bytes = 0;   // memory traffic of the forward, all of them
  double saved_bytes = 0;     // what autograd keeps of them for backward, all of them
  bool memory_bound = false;  // its time is its bytes at the bandwidth, not its arithmetic
};

// The operations of one micro-batch of `micro_batch` samples, planned with or without free-lunch,
// as `options` (its implementation: whose model code, compiled or not) plans them on `gpu`; the
// largest total first.
std::vector<OpTime> op_breakdown(const ModelSpec& model,
                                 const GpuSpec& gpu,
                                 int64_t micro_batch,
                                 bool free_lunch,
                                 const PlanOptions& options);

}  // namespace gpudays
