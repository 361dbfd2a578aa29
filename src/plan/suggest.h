// What would fit when nothing does: the full method search (offloading, sharding), more GPUs of
// the same kind, or a GPU with more memory.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "plan/planner.h"

namespace gpudays {

// What a suggestion changes: the method search (every method set, not the request's preset), the
// pins, the GPU count or the GPU. The command line names the flag of the first.
enum class SuggestionKind { kAllMethods, kUnpinned, kMoreGpus, kLargerGpu };

struct Suggestion {
  SuggestionKind kind;
  std::string change;  // "the full method search (...)", "16 x a100-80gb-sxm (2 nodes x 8)"
  PlanRow best;
};

std::vector<Suggestion> suggest_alternatives(const ModelSpec& model,
                                             const Cluster& cluster,
                                             const std::vector<GpuSpec>& gpus,
                                             const PlanOptions& options);

}  // namespace gpudays
