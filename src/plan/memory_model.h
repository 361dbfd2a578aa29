// Per-GPU peak memory of one training configuration, by part: model states under each sharding
// stage and offloading (Rajbhandari et al. 2020, "ZeRO", Section 5), activations with and without
// checkpointing, logits and loss, temporary buffers, framework overhead.
#pragma once

#include "catalog/model_spec.h"
#include "plan/workload_summary.h"
#include "search_space/cluster.h"
#include "search_space/methods.h"

namespace gpudays {

struct MemoryBreakdown {
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;
  double logits_loss_bytes = 0.0;
  double temporary_bytes = 0.0;
  double framework_bytes = 0.0;  // CUDA context and library handles, NCCL buffers
  // The caching allocator's slack: blocks rounded up and split, free blocks it keeps reserved;
  // less than its usual share where the card's limit caps the reservation of a configuration
  // that fits (allocator_at_limit).
  double fragmentation_bytes = 0.0;
  bool allocator_at_limit = false;
  double fragmentation_floor_bytes = 0.0;  // what is left of the slack at the card's limit
  // The slack at the high end of what public runs reserved, capped by the card: the top of the
  // range the reservation falls in (most_bytes()).
  double fragmentation_high_bytes = 0.0;
  // CUDA graphs: the capture's private pool keeps the micro-step's working set for the whole run,
  // so the optimizer's buffers come on top of it (the working set's slack is the allocator's,
  // counted once, in whichever pool it lives).
  double graph_pool_bytes = 0.0;
  double host_bytes = 0.0;  // per node, pinned CPU memory of offloaded state
  double model_state_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
  // Everything but the allocator's slack.
  double without_slack_bytes() const {
    return model_state_bytes() + activations_bytes + logits_loss_bytes + temporary_bytes +
           framework_bytes + graph_pool_bytes;
  }
  double total_bytes() const { return without_slack_bytes() + fragmentation_bytes; }
  // What the caching allocator hands out at the peak (torch's max_memory_allocated): the tensors,
  // without the allocator's slack or what the process holds outside it.
  double allocated_bytes() const { return without_slack_bytes() - framework_bytes; }
  // What the configuration needs at the least: the allocator's slack at the card's limit. A
  // configuration fits when this is at most the device's memory.
  double least_bytes() const { return without_slack_bytes() + fragmentation_floor_bytes; }
  // What the process may hold at the most: the allocator's slack at the high end of the public
  // runs' range, capped by the card. [least_bytes(), most_bytes()] is the peak's range.
  double most_bytes() const { return without_slack_bytes() + fragmentation_high_bytes; }
};

// The CUDA terms apply to GPUs only: the host CPU (DeviceKind::kCpu) has no CUDA context, NCCL
// buffers or cuBLAS workspace.
struct MemoryModelConstants {
  // What a process holds outside the caching allocator: the CUDA context with the kernels it has
  // loaded (lazily, CUDA >= 11.7) and library handles. PyTorch's out-of-memory messages give it as
  // "in use" less PyTorch's reservation: 0.13, 0.25, 0.30, 0.50, 0.50 and 0.95 GiB in six of them
  // (docs/planner.md names them), median 0.40; a bare context is 0.3-0.55 GiB
  // (pytorch/pytorch#107667, #81257). 0.5 GiB, within both.
  double cuda_context_bytes = 0.5 * 1024 * 1024 * 1024;
  // NCCL's buffers when world > 1, which grow with its channels, more over NVLink than over PCIe
  // (NCCL's maintainer, NVIDIA/nccl#864): a communicator's all-reduce on 4 A100s over NVLink took
  // 544 MiB with 2 ranks and 688 MiB with 3 or 4 (NVIDIA/nccl#964; beyond 2 nodes it should no
  // longer grow, #864). Over PCIe, 0.25 GiB: an assumption, no measurement found.
  double communicator_bytes = 0.25 * 1024 * 1024 * 1024;
  double nvlink_pair_communicator_bytes = 544.0 * 1024 * 1024;
  double nvlink_communicator_bytes = 688.0 * 1024 * 1024;
  // The caching allocator's slack over its peak of live tensors, as it grows when the card has
  // room: peak reserved / peak allocated in seven public pretraining logs (Megatron-LM #60,
  // PRs #1912 and #5662; NVIDIA-NeMo #14850; inclusionAI Ling-V2; min-max-gpt PR #5) has median
  // 1.14 (1.05-1.39); docs/planner.md lists them with the fine-tuning runs (median of 17: 1.26).
  double fragmentation = 0.14;
  // The high end of that slack: the largest of the seven logs, 1.387 (Megatron-LM #60, GPT-2
  // 2.6B in fp16, checkpointed), as the low end is the floor below (the smallest log, 1.054, is
  // about it). A range between the extremes of n independent samples holds the next one with
  // probability (n - 1) / (n + 1): 75% for seven, near the 80% of a 10th-90th percentile range.
  double fragmentation_high = 0.39;
  // What is left of that slack at the card's limit: there the allocator frees its cached blocks
  // and retries (c10's CUDACachingAllocator, release_cached_blocks), so only split blocks stay.
  // Runs near their card's capacity reserve 1.006-1.07 per allocated byte (Qwen3-30B-A3B in
  // Megatron and NeMo, Ling-V2), GMLake's baseline without memory-saving methods 1.02-1.08 (Guo
  // et al. ASPLOS 2024): 5%. Whether a configuration fits is decided at this slack.
  double fragmentation_at_limit = 0.05;
  double cublas_workspace_bytes = 32.0 * 1024 * 1024;
  // A stack whose ZeRO stage 1 shards the optimizer of an autocast model (torch's
  // ZeroRedundancyOptimizer under AMP, as Lightning's DDPStrategyZero1 runs it): fp32 weights and
  // gradients stay whole on every GPU and the fp32 weights are the master copy, so the sharded
  // optimizer holds only the two moments. The time model's option of the same name.
  bool autocast_fp32_weights_at_stage_1 = false;
  // A model held in the compute dtype with the optimizer's fp32 master copy (apex AMP O2,
  // DeepSpeed's fp16/bf16 engine, Megatron): no autocast, so no weight casts per micro-step and
  // 2 + 2 + 12 bytes per parameter at stage 0 too (the ZeRO paper's accounting); the update
  // writes the working copy. The engine, and so `plan`, trains under autocast instead.
  bool half_precision_model = false;
  // The checkpointed blocks' inputs kept in host memory (DeepSpeed's activation checkpointing
  // with cpu_checkpointing): on the GPU only the input of the block being recomputed, copied
  // back for it. The time model's option of the same name.
  bool checkpoint_inputs_on_host = false;
  // Whether free-lunch captures each micro-step in a CUDA graph: the engine's does (its private
  // pool is a term of its own); the other stacks the planner describes (ModelCode) do not.
  bool cuda_graphs = true;
  // torch FSDP's layout at stage 3: the shards of the parameters and of their gradients in fp32
  // (FSDP casts each reduced gradient shard back to the parameter's dtype,
  // _cast_grad_to_param_dtype in torch/distributed/fsdp/_runtime_utils.py), Adam's moments beside
  // them: 4 + 4 + 8 bytes per parameter over N, where the ZeRO paper counts 2 + 2 + 12. The same
  // total; what differs is how much of it gradients are. Set by validate for a case whose sharding
  // names FSDP.
  bool fp32_sharded_state = false;
  // Whether another stack sets the gradients to None after each optimizer step (torch >= 2.0's
  // zero_grad default, FSDP's sharded gradients with it): a measurement case's gradients_freed.
  // The engine's own behaviour is engine_frees_gradients().
  bool stack_frees_gradients = false;
  // Set per configuration by the planner: no gradient exists as the peak micro-step's forward
  // runs (the stack frees them and the step has one micro-step), so backward allocates each
  // block's gradients as it frees that block's activations and the two never peak together.
  bool gradients_allocated_in_backward = false;
  // The engine's gradient all-reduce over several ranks without sharding works bucket by bucket
  // (engine/engine.cpp): one bucket, fp32, beside the gradients at the step's end. Set by the
  // planner for the engine's plans; 0 for other stacks (DDP's buckets are not modelled).
  double all_reduce_bucket_bytes = 0.0;
  // fp32 buffers, each the size of the largest tensor the optimizer updates, that one update
  // holds at once: the engine's per-tensor Adam (engine/adam.cpp, plain_step) keeps the second
  // moment's square root and its quotient by the bias correction (2), and with L2 weight decay
  // the decayed gradient too (3); its fused kernel none. What it updates is a parameter at stage
  // 0, the flat shard of a sharding unit above. Set by the planner for the engine's plans; 0 for
  // other stacks (their optimizers' buffers are not modelled).
  double optimizer_buffers = 0.0;
  // The engine's step at stage >= 1 in a 16-bit precision copies each unit's gradient shard to
  // fp32 for the update (Engine::local_grads): 4 bytes per parameter over N beside the shards.
  // Set by the planner for the engine's plans.
  bool fp32_gradient_shard_copies = false;
  // Sharded (stage >= 2), the parameters outside the blocks form one unit whose gradients stay
  // whole, in the compute dtype, from the head's backward until the micro-step's backward ends,
  // when it is reduced (the engine's first unit; FSDP's root, which validate sets for a case whose
  // sharding names FSDP); DeepSpeed's ZeRO partitions each gradient as its buckets are reduced.
  bool root_unit_gradients_whole = false;
  // The engine's reduce of that unit flattens its gradients into one buffer beside them
  // (ShardUnits::reduce): a second copy as backward ends.
  bool root_gradients_flattened = false;
  // At stage 3 that unit is gathered for the whole micro-step, its weights whole in the compute
  // dtype beside the shards (Engine::begin_micro_step). Set by the planner for the engine's plans;
  // FSDP's root, which likely stays gathered too (docs/planner.md), is not.
  bool root_unit_gathered = false;
};

// Host memory of offloaded optimizer state: fp32 parameters, momentum, variance and gradients
// (ZeRO-Offload, Ren et al. 2021, Sec. 4.1), per parameter of the shard.
constexpr double kHostOptimizerBytesPerParam = 16.0;

// Host memory per node when the user does not say: twice the node's GPU memory, at least 64 GiB
// (an assumption: the workstation rule of thumb; DGX A100/H100 ship 3.2x).
constexpr double kDefaultHostMemoryPerGpuMemory = 2.0;
constexpr double kMinDefaultHostMemoryBytes = 64.0 * 1024 * 1024 * 1024;
double default_host_memory_bytes(const Cluster& cluster);

// Bytes per parameter of mixed-precision (or fp32) Adam, as the ZeRO paper counts them.
struct StateBytesPerParam {
  double weights;    // working copy: 2 (fp16/bf16) or 4 (fp32)
  double gradients;  // same dtype as the working copy
  double optimizer;  // fp32 master (mixed precision only) + Adam first and second moments
};
StateBytesPerParam state_bytes_per_param(Precision precision);

// Whether the engine captures the micro-step as a CUDA graph (engine/apply_methods.h): free-lunch
// without checkpointing or sharding, on a GPU.
bool cuda_graphs_apply(const MethodSet& methods, const Cluster& cluster);

// Model-state bytes per GPU (weights, gradients, optimizer) for a sharding stage, as the ZeRO
// paper counts them; `fp32_master_weights`: mixed precision whose fp32 weights are the master copy
// (autocast at stage 0, a stack's stage 1 or FSDP's stage 3, MemoryModelConstants), so gradients
// are fp32 too and the optimizer holds only the moments: 4 + 4 + 8 bytes per parameter.
MemoryBreakdown model_state_memory(double params,
                                   Precision precision,
                                   Sharding sharding,
                                   bool offloading,
                                   int64_t world_size,
                                   bool fp32_master_weights = false);

// Whether the engine sets the gradients to None after each optimizer step (Engine::clear_grads):
// always, but at stage 1 (the flat gradients are attached before the forward) and under CUDA
// graphs (the captured backward accumulates into gradients that stay).
bool engine_frees_gradients(const MethodSet& methods, const Cluster& cluster);

// The engine's MemoryModelConstants::optimizer_buffers: its fused Adam (free-lunch) none; its
// per-tensor Adam two, three with L2 weight decay (Adam, not AdamW, with a decay).
double engine_optimizer_buffers(const RecipeSpec& recipe, const MethodSet& methods);

MemoryBreakdown predict_memory(double params,
                               Precision precision,
                               const MethodSet& methods,
                               const Cluster& cluster,
                               const WorkloadSummary& workload,
                               const MemoryModelConstants& constants = {});

}  // namespace gpudays
