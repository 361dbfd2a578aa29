// The hardware a plan is for: a GPU type, GPUs per node and nodes.
#pragma once

#include <cstdint>

#include "catalog/gpu_spec.h"

namespace gpudays {

struct Cluster {
  const GpuSpec* gpu = nullptr;
  int64_t num_nodes = 1;
  int64_t gpus_per_node = 1;
  int64_t world_size() const { return num_nodes * gpus_per_node; }
};

}  // namespace gpudays
