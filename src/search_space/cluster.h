// The hardware a configuration runs on: its shape (nodes x GPUs per node, the ranks of a job) and,
// for a plan, the GPU type. The host CPU is a device kind of its own (catalog/gpu_spec.h).
#pragma once

#include <cstdint>

#include "catalog/gpu_spec.h"

namespace gpudays {

struct ClusterShape {
  int64_t num_nodes = 1;
  int64_t gpus_per_node = 1;  // ranks per node (CPU ranks on the host CPU)
  int64_t world_size() const { return num_nodes * gpus_per_node; }
  bool operator==(const ClusterShape&) const = default;
};

// A shape of one GPU type. Aggregate: Cluster{{nodes, gpus_per_node}, &gpu}.
struct Cluster : ClusterShape {
  const GpuSpec* gpu = nullptr;
  ClusterShape shape() const { return *this; }
};

}  // namespace gpudays
