// Step time of one configuration: every micro-step's forward and backward (plus recomputation),
// the exposed part of data-parallel communication for the sharding stage, offload transfers and
// the CPU optimizer, and the GPU optimizer step.
#pragma once

#include "catalog/model_spec.h"
#include "plan/device_model.h"
#include "plan/workload_summary.h"
#include "search_space/cluster.h"
#include "search_space/methods.h"

namespace gpudays {

struct TimeBreakdown {
  double compute_s = 0.0;        // forward + backward of every micro-step
  double recompute_s = 0.0;      // activation checkpointing's extra forward
  double communication_s = 0.0;  // exposed (not overlapped) collective time
  double offload_s = 0.0;        // exposed host transfers and CPU optimizer
  double optimizer_s = 0.0;      // GPU optimizer, clipping, gradient zeroing
  double step_s() const {
    return compute_s + recompute_s + communication_s + offload_s + optimizer_s;
  }
};

struct TimeModelOptions {
  double inter_node_gb_per_s = 12.5;     // per node, per direction (100 Gb/s network)
  double cpu_adam_params_per_s = 1.0e9;  // per node, CPU Adam throughput (assumption)
  double nvlink_efficiency = 0.8;        // achievable fraction of link bandwidth (bus bandwidth)
  double pcie_efficiency = 0.5;          // PCIe peer traffic shares the host bridge
  double host_link_efficiency = 0.8;
  double network_efficiency = 0.8;
  // Mixed precision by autocast over fp32 weights at ZeRO stage 1 too (a measured stack such as
  // Lightning's DDPStrategyZero1: torch's ZeroRedundancyOptimizer shards only the optimizer
  // state, the weights stay fp32 and every micro-step casts them). The planner's own stage 1
  // keeps a half-precision working copy instead.
  bool autocast_fp32_weights_at_stage_1 = false;
  double overlap_fraction = 0.8;      // fraction of concurrent compute that hides comm
  double min_exposed_fraction = 0.1;  // the last bucket is never hidden
};

// Per-GPU bus bandwidth for collectives on this cluster, bytes/s.
double collective_bandwidth_bytes_per_s(const Cluster& cluster, const TimeModelOptions& options);

TimeBreakdown predict_step_time(double params,
                                Precision precision,
                                const MethodSet& methods,
                                const Cluster& cluster,
                                int64_t grad_acc_steps,
                                const WorkloadSummary& workload,
                                const DeviceModel& device,
                                const TimeModelOptions& options);

}  // namespace gpudays
