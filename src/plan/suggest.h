// What would fit when nothing does: the full method search (offloading, sharding), more GPUs of
// the same kind, or a GPU with more memory.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "plan/planner.h"

namespace gpudays {

struct Suggestion {
  std::string change;  // "use --methods all", "16 GPUs (2 nodes x 8)", "a100-80gb-sxm"
  PlanRow best;
};

std::vector<Suggestion> suggest_alternatives(const ModelSpec& model,
                                             const Cluster& cluster,
                                             const std::vector<GpuSpec>& gpus,
                                             const PlanOptions& options);

}  // namespace gpudays
