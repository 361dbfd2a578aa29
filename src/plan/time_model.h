// Step time of one configuration: every micro-step's forward and backward (plus recomputation),
// the exposed part of data-parallel communication for the sharding stage, offload transfers and
// the CPU optimizer, and the GPU optimizer step.
#pragma once

#include <optional>
#include <string>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/device_model.h"
#include "plan/fp16_optimizer.h"
#include "plan/workload_summary.h"
#include "search_space/cluster.h"
#include "search_space/methods.h"

namespace gpudays {

struct TimeBreakdown {
  double compute_s = 0.0;        // forward + backward of every micro-step
  double recompute_s = 0.0;      // activation checkpointing's extra forward
  double communication_s = 0.0;  // exposed (not overlapped) collective time
  double offload_s = 0.0;        // exposed host transfers and CPU optimizer (and checkpoints)
  double optimizer_s = 0.0;      // GPU optimizer, clipping, gradient zeroing
  double step_s() const {
    return compute_s + recompute_s + communication_s + offload_s + optimizer_s;
  }
};

// How the recipe decays weights: not at all, decoupled (AdamW), or as an L2 term in the gradient
// (Adam).
enum class WeightDecay { kNone, kDecoupled, kL2 };

// Adam(W), the engine's; SGD with Nesterov momentum, as some measured stacks train (timm's 'sgd').
enum class OptimizerUpdate { kAdam, kSgdNesterov };

// The CPU optimizer's rate per node the planner accepts (--cpu-adam-params-per-s): one core's
// plain loop updates some 10^8 parameters/s (DeepSpeed's CPUAdam some 10^9 per node), so 10^5 is
// a thousand times slower than any node; a rate near 0 made the offloaded step infinite. 10^13 is a
// thousand times the fastest node's.
constexpr double kMinCpuAdamParamsPerS = 1e5;
constexpr double kMaxCpuAdamParamsPerS = 1e13;

struct TimeModelOptions {
  double inter_node_gb_per_s = 12.5;     // per node, per direction (100 Gb/s network)
  double cpu_adam_params_per_s = 1.0e9;  // per node, CPU Adam throughput (assumption)
  // The node's links where they differ from the GPU file's (bridged pairs, peer-to-peer).
  LinkSettings links;
  double nvlink_efficiency = 0.8;  // achievable fraction of link bandwidth (bus bandwidth)
  double pcie_efficiency = 0.5;    // PCIe peer traffic shares the host bridge
  // Without peer-to-peer, NCCL stages every chunk in host memory (its SHM transport): a fraction
  // of the host link, half the peer-to-peer PCIe figure (an assumption, docs/planner.md).
  double host_staged_efficiency = 0.25;
  double host_link_efficiency = 0.8;
  double network_efficiency = 0.8;
  // Mixed precision by autocast over fp32 weights at ZeRO stage 1 too (a measured stack such as
  // Lightning's DDPStrategyZero1: torch's ZeroRedundancyOptimizer shards only the optimizer
  // state, the weights stay fp32 and every micro-step casts them). The planner's own stage 1
  // keeps a half-precision working copy instead.
  bool autocast_fp32_weights_at_stage_1 = false;
  // A model held in the compute dtype with the optimizer's fp32 master copy (apex AMP O2,
  // DeepSpeed's fp16/bf16 engine, Megatron): no autocast, so no weight casts per micro-step and
  // 2 + 2 + 12 bytes per parameter at stage 0 too (the ZeRO paper's accounting); the update
  // writes the working copy. MemoryModelConstants' field of the same name.
  bool half_precision_model = false;
  // The optimizer update, where a measured stack's differs from the engine's Adam(W).
  OptimizerUpdate optimizer = OptimizerUpdate::kAdam;
  // The recipe's weight decay: the unfused step pays one more pass (AdamW's p.mul_, Adam's L2
  // grad.add(p)).
  WeightDecay weight_decay = WeightDecay::kNone;
  // fp16 with dynamic loss scaling (the engine's, PyTorch's GradScaler): the gradients are
  // unscaled before the update. Some measured stacks run fp16 autocast without it.
  bool fp16_loss_scaling = true;
  // The update as one multi-tensor kernel or a per-tensor loop; absent: fused with free-lunch
  // (the engine's). A measured stack may run a fused optimizer without free-lunch's other parts.
  std::optional<bool> fused_optimizer;
  // A 2020-era fp16 optimizer's per-tensor checks and, for DeepSpeed's ZeRO stage 1 and
  // Megatron-LM's local DDP, gradient collectives started only after the whole backward
  // (plan/fp16_optimizer.h); kTorch: none.
  Fp16Optimizer fp16_optimizer = Fp16Optimizer::kTorch;
  // The checkpointed blocks' inputs kept in host memory (DeepSpeed's cpu_checkpointing): every
  // micro-step copies them to the host in the forward and back in the backward, each copy into
  // or out of pageable memory, so the stream waits for it. MemoryModelConstants' option.
  bool checkpoint_inputs_on_host = false;
  double overlap_fraction = 0.8;      // fraction of concurrent compute that hides comm
  double min_exposed_fraction = 0.1;  // the last bucket is never hidden
};

// What the data-parallel collectives (the gradient all-reduce, or the sharded stages'
// reduce-scatter and all-gather) cross on a cluster as configured: nothing on one GPU, the node's
// GPU link (NVLink/NVSwitch, or PCIe peer-to-peer), the NVLink bridge of a bridged pair, host
// memory when the GPUs have no peer-to-peer (NCCL_P2P_DISABLE=1), or the network between nodes
// when it is the slower part.
enum class CollectiveRoute { kNone, kGpuLink, kPairBridge, kHostMemory, kNetwork };

struct CollectiveLink {
  CollectiveRoute route = CollectiveRoute::kNone;
  std::string link;              // the physical link: "pcie4", "nvlink3", ... ("" for kNone)
  double bus_bytes_per_s = 0.0;  // per GPU, the achievable bus bandwidth; 0 for one GPU
  // "none", "nvlink_bridge", "host_memory", "network", or the GPU link's name ("pcie4").
  std::string name() const;
  bool operator==(const CollectiveLink&) const = default;
};

CollectiveLink collective_link(const Cluster& cluster, const TimeModelOptions& options);

// Bytes an Adam(W) step moves per parameter with fp32 moments and weights and gradients of
// `gradient_bytes`: the fused multi-tensor kernel reads and writes each state once; the unfused
// path (the plain method set's per-tensor loop) runs each line of the update as its own kernel
// over the whole tensor (docs/planner.md, "Step time").
double adam_step_bytes_per_param(bool fused, WeightDecay decay, double gradient_bytes);
// The same for SGD with Nesterov momentum (fp32 momentum and weights, no weight decay).
double sgd_nesterov_step_bytes_per_param(bool fused, double gradient_bytes);

// Whether a link name ("pcie4", "nvlink3") is PCIe.
bool is_pcie_link(const std::string& link);

// Per-GPU bus bandwidth for collectives on this cluster, bytes/s (collective_link's).
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
