// Memory model. Model states per GPU with N data-parallel GPUs and P parameters (ZeRO paper,
// Figure 1: K = 12 bytes of optimizer state per parameter for mixed-precision Adam):
//   none: (2 + 2 + K) P;  stage 1: (2 + 2) P + K P / N;  stage 2: 2 P + (2 + K) P / N;
//   stage 3: (2 + 2 + K) P / N.   fp32 training: 4-byte weights and gradients, K = 8.
#include "plan/memory_model.h"

#include <algorithm>

namespace gpudays {
namespace {

// What a device's runtime holds besides tensors: on a GPU the CUDA context, NCCL buffers (several
// ranks) and the cuBLAS workspace; the host CPU has none of them.
struct RuntimeBytes {
  double context = 0.0;
  double communicator = 0.0;
  double workspace = 0.0;
};

double communicator_bytes(const Cluster& cluster, const MemoryModelConstants& c) {
  const int64_t world = cluster.world_size();
  if (world == 1) return 0.0;
  if (cluster.gpu->gpu_link.rfind("nvlink", 0) != 0) return c.communicator_bytes;
  return world == 2 ? c.nvlink_pair_communicator_bytes : c.nvlink_communicator_bytes;
}

RuntimeBytes runtime_bytes(const Cluster& cluster, const MemoryModelConstants& c) {
  if (cluster.gpu->kind == DeviceKind::kCpu) return {};
  return {c.cuda_context_bytes, communicator_bytes(cluster, c), c.cublas_workspace_bytes};
}

// The caching allocator's slack over the live tensors (dynamic_bytes). On a GPU the reservation
// grows to its usual share where the card has room; at the limit the allocator frees its cache and
// retries, down to the split blocks' share (the floor: least_bytes(), on which the planner decides
// whether a configuration fits); the high end of public runs' slack, also capped, tops the
// peak's range (most_bytes()). The host CPU has no caching allocator (glibc's malloc under the
// engine's tracking allocator), and a configuration that does not fit has no limit to reach: the
// floor.
void set_allocator_slack(MemoryBreakdown& m,
                         double dynamic_bytes,
                         const GpuSpec& device,
                         const MemoryModelConstants& c) {
  m.fragmentation_floor_bytes = c.fragmentation_at_limit * dynamic_bytes;
  m.fragmentation_bytes = m.fragmentation_floor_bytes;
  m.fragmentation_high_bytes = m.fragmentation_floor_bytes;
  const double memory = static_cast<double>(device.memory_bytes);
  if (device.kind == DeviceKind::kCpu || m.least_bytes() > memory) return;
  const double room = memory - m.without_slack_bytes();  // what the card leaves the slack
  const auto capped = [&](double share) {
    return std::max(m.fragmentation_floor_bytes, std::min(share * dynamic_bytes, room));
  };
  m.fragmentation_bytes = capped(c.fragmentation);
  m.fragmentation_high_bytes = std::max(m.fragmentation_bytes, capped(c.fragmentation_high));
  m.allocator_at_limit = m.fragmentation_bytes < c.fragmentation * dynamic_bytes;
}

// The parameters outside the blocks (at stage >= 2 the root unit: the engine's first unit, FSDP's
// root), and of them those whose gradients backward computes before the blocks' (all but the
// input embeddings, whose gradients come last).
struct RootParams {
  double all = 0.0;
  double early = 0.0;
};

RootParams root_params(double params, const WorkloadSummary& w) {
  RootParams r;
  r.all = std::max(0.0, params - w.blocks_params);
  r.early = std::max(0.0, r.all - static_cast<double>(w.input_only_embedding_params));
  return r;
}

// Whether a root unit's gradients are whole until backward ends: sharded (stage >= 2) over
// several GPUs, in a stack with such a unit (MemoryModelConstants::root_unit_gradients_whole).
bool whole_root_unit(const MethodSet& methods,
                     const Cluster& cluster,
                     const MemoryModelConstants& c) {
  return c.root_unit_gradients_whole && sharding_stage(methods.sharding) >= 2 &&
         cluster.world_size() > 1;
}

// The blocks' activations that backward has freed as it ends: all but the last block's (with
// checkpointing, all but its input and what a per-op policy keeps of it: one block's share of
// the checkpointed blocks' bytes where the blocks are alike).
double freed_by_backward(const MethodSet& methods,
                         const WorkloadSummary& w,
                         const MemoryModelConstants& c) {
  if (!methods.activation_checkpointing) {
    return std::max(0.0, w.block_saved_bytes - w.max_block_saved_bytes);
  }
  if (c.checkpoint_inputs_on_host) return 0.0;
  const double one_block =
      w.layers > 0 ? w.checkpointed_block_bytes / static_cast<double>(w.layers) : 0.0;
  return std::max(0.0, w.checkpointed_block_bytes - std::max(w.max_block_input_bytes, one_block));
}

// The gradients alive at the peak, in a breakdown that keeps every activation: the most of two
// phases less the activations each lacks. As backward starts every activation is alive, beside
// the gradients that exist: all of them where they stay between steps, and where the stack frees
// them and the step has one micro-step (gradients_allocated_in_backward) only the first ones
// (those outside the blocks, but the input embeddings', and one block's). As backward ends, one
// block's activations are left beside every gradient. Sharded (stage >= 2 over several GPUs) with
// a root unit whose gradients stay whole (root_unit_gradients_whole), those are whole, in the
// compute dtype, from the head's backward until the micro-step's backward ends (the engine's
// reduce then flattens them into a second copy: predict_memory counts it after backward).
double gradients_at_peak(double gradients,
                         double params,
                         Precision precision,
                         const MethodSet& methods,
                         const Cluster& cluster,
                         const WorkloadSummary& w,
                         const MemoryModelConstants& c) {
  if (gradients <= 0.0 || params <= 0.0) return gradients;
  const RootParams root = root_params(params, w);
  const double block = static_cast<double>(w.largest_block_params);
  const double per_param = gradients / params;  // as held: sharded at stage >= 2
  const bool in_backward = c.gradients_allocated_in_backward;
  const bool whole_root = whole_root_unit(methods, cluster, c);
  const double compute = state_bytes_per_param(precision).gradients;
  double start = in_backward ? per_param * (root.early + block) : gradients;
  double end = gradients;
  if (whole_root) {
    start = (in_backward ? per_param * block : gradients) + root.early * compute;
    end += root.all * compute - (in_backward ? per_param * root.all : 0.0);
  }
  return std::max(start, end - freed_by_backward(methods, w, c));
}

// The largest tensor the optimizer updates, elements: a parameter at stage 0; above, the flat
// shard of a sharding unit (engine/shard_units.h): of everything at stage 1, of the largest of
// the blocks and the root unit (what is outside them) at stages 2 and 3.
double largest_update_tensor(double params,
                             const MethodSet& methods,
                             const Cluster& cluster,
                             const WorkloadSummary& w) {
  const int stage = sharding_stage(methods.sharding);
  const double n = static_cast<double>(cluster.world_size());
  if (stage == 0) return static_cast<double>(w.largest_param_tensor);
  if (stage == 1) return params / n;
  const double block = static_cast<double>(w.largest_block_params);
  return std::max(block, root_params(params, w).all) / n;
}

// What comes after backward has freed the activations and autocast's weight copies, beside
// every gradient (`gradients`, as held before the step): the all-reduce's bucket without sharding
// over several GPUs (fp32, at most the gradients) or the engine's reduce of a whole root unit
// (its gradients whole and their flat copy), and then the optimizer's step (its buffers; the
// engine's fp32 copies of the gradient shards; on the host when offloaded). The larger.
double after_backward_bytes(double params,
                            double gradients,
                            Precision precision,
                            const MethodSet& methods,
                            const Cluster& cluster,
                            const WorkloadSummary& w,
                            const MemoryModelConstants& c) {
  const int stage = sharding_stage(methods.sharding);
  const double n = static_cast<double>(cluster.world_size());
  double reduce = 0.0;
  if (stage == 0 && n > 1.0) reduce = std::min(c.all_reduce_bucket_bytes, 4.0 * params);
  if (whole_root_unit(methods, cluster, c) && c.root_gradients_flattened) {
    const double root = root_params(params, w).all;
    const double shard = c.gradients_allocated_in_backward ? gradients * root / params : 0.0;
    reduce = 2.0 * root * state_bytes_per_param(precision).gradients - shard;
  }
  if (methods.offloading) return reduce;
  double step = c.optimizer_buffers * 4.0 * largest_update_tensor(params, methods, cluster, w);
  if (c.fp32_gradient_shard_copies && stage >= 1 && precision != Precision::kFp32) {
    step += 4.0 * params / n;
  }
  return std::max(reduce, step);
}

}  // namespace

bool cuda_graphs_apply(const MethodSet& methods, const Cluster& cluster) {
  return methods.free_lunch && !methods.activation_checkpointing &&
         methods.sharding == Sharding::kNone && cluster.gpu->kind == DeviceKind::kGpu;
}

bool engine_frees_gradients(const MethodSet& methods, const Cluster& cluster) {
  return sharding_stage(methods.sharding) != 1 && !cuda_graphs_apply(methods, cluster);
}

double engine_optimizer_buffers(const RecipeSpec& recipe, const MethodSet& methods) {
  if (methods.free_lunch) return 0.0;
  const bool l2 = recipe.optimizer == OptimizerKind::kAdam && recipe.weight_decay != 0.0;
  return l2 ? 3.0 : 2.0;
}

double default_host_memory_bytes(const Cluster& cluster) {
  const double gpus = static_cast<double>(cluster.gpus_per_node * cluster.gpu->memory_bytes);
  return std::max(kMinDefaultHostMemoryBytes, kDefaultHostMemoryPerGpuMemory * gpus);
}

StateBytesPerParam state_bytes_per_param(Precision precision) {
  if (precision == Precision::kFp32) return {4.0, 4.0, 8.0};
  return {2.0, 2.0, 12.0};
}

MemoryBreakdown model_state_memory(double params,
                                   Precision precision,
                                   Sharding sharding,
                                   bool offloading,
                                   int64_t world_size,
                                   bool fp32_master_weights) {
  StateBytesPerParam per = state_bytes_per_param(precision);
  const double n = static_cast<double>(world_size);
  const int stage = sharding_stage(sharding);
  if (fp32_master_weights && precision != Precision::kFp32) {
    per = {4.0, 4.0, 8.0};  // the fp32 weights are the master copy: the optimizer keeps moments
  }
  MemoryBreakdown m;
  m.weights_bytes = per.weights * params / (stage >= 3 ? n : 1.0);
  m.gradients_bytes = per.gradients * params / (stage >= 2 ? n : 1.0);
  m.optimizer_bytes = per.optimizer * params / (stage >= 1 ? n : 1.0);
  if (offloading) {
    // The CPU optimizer holds fp32 parameters, momentum, variance and gradients of its shard
    // (ZeRO-Offload, Ren et al. 2021, Sec. 4.1: 16 bytes per parameter; DeepSpeed's
    // estimate_zero2/3_model_states_mem_needs count the same 16, or 18 with the stage-3 weight
    // shards); at stage 3 the working weight shards live there too.
    m.host_bytes = kHostOptimizerBytesPerParam * params / n + (stage >= 3 ? m.weights_bytes : 0.0);
    m.optimizer_bytes = 0.0;
    m.gradients_bytes = 0.0;
    if (stage >= 3) m.weights_bytes = 0.0;
  }
  return m;
}

MemoryBreakdown predict_memory(double params,
                               Precision precision,
                               const MethodSet& methods,
                               const Cluster& cluster,
                               const WorkloadSummary& w,
                               const MemoryModelConstants& c) {
  // Autocast over fp32 weights (PyTorch AMP, the engine's autocast): the fp32 weights are the
  // master copy and the gradients fp32 (4 + 4 + 8 bytes per parameter), and every weight is cast
  // to the compute dtype once per forward (torch.autocast caches the casts of leaf weights) and
  // autograd keeps each copy for its input's gradient, so all of them are alive when backward
  // starts.
  const int stage = sharding_stage(methods.sharding);
  const bool fp32_weights =
      (stage == 0 && !c.half_precision_model) || (stage == 1 && c.autocast_fp32_weights_at_stage_1);
  const bool fp32_master = fp32_weights || (stage == 3 && c.fp32_sharded_state);
  MemoryBreakdown m = model_state_memory(
      params, precision, methods.sharding, methods.offloading, cluster.world_size(), fp32_master);
  m.host_bytes *= static_cast<double>(cluster.gpus_per_node);
  double cast_copies = 0.0;  // gone by the optimizer's step (the cache is cleared, backward done)
  if (precision != Precision::kFp32 && fp32_weights && !methods.offloading) {
    cast_copies = params * state_bytes_per_param(precision).weights;
    m.weights_bytes += cast_copies;
  }
  m.activations_bytes =
      w.stem_saved_bytes + (methods.activation_checkpointing
                                ? w.checkpointed_block_bytes + w.max_block_saved_bytes
                                : w.block_saved_bytes);
  if (methods.activation_checkpointing && c.checkpoint_inputs_on_host) {
    m.activations_bytes -= w.checkpointed_input_bytes - w.max_block_input_bytes;
    m.host_bytes += w.checkpointed_input_bytes * static_cast<double>(cluster.gpus_per_node);
  }
  // The gradients at the peak; a root unit's held whole until it is reduced are that reduction's
  // buffers, counted in temporary (the gradients row stays the sharded state's).
  const double full_gradients = m.gradients_bytes;
  MemoryModelConstants shards_only = c;
  shards_only.root_unit_gradients_whole = false;
  m.gradients_bytes =
      gradients_at_peak(full_gradients, params, precision, methods, cluster, w, shards_only);
  const double root_unit_bytes =
      gradients_at_peak(full_gradients, params, precision, methods, cluster, w, c) -
      m.gradients_bytes;
  // What the model's output holds (WorkloadSummary::returned_bytes, head_output_bytes): the keys
  // and values its layers return live until its forward returns; a loop that holds the output
  // keeps them and the returned logits through backward (checkpointing frees the keys and values
  // otherwise; without it attention keeps the same tensors), and the previous step's beside the
  // next forward.
  const bool checkpointed = methods.activation_checkpointing;
  if (w.holds_output) {
    m.activations_bytes += w.head_output_bytes + (checkpointed ? w.returned_bytes : 0.0);
  }
  const double returned_at_forward_end = (w.holds_output || checkpointed ? w.returned_bytes : 0.0) +
                                         (w.holds_output ? w.head_output_bytes : 0.0);
  // The head's tensors (logits, loss, their gradients) live from the head's forward until its
  // backward ends, which is before any block's backward (or recompute) begins; a block's
  // backward buffers and, checkpointed, its recomputed activations come after. The phases never
  // coexist: the head adds only what its phases (the end of the forward, with what the output
  // holds, and its backward) have above the blocks' backward phase.
  const double block_phase_bytes =
      w.op_buffer_bytes + (checkpointed ? w.max_block_saved_bytes : 0.0);
  const double head_phase_bytes = std::max(w.head_saved_bytes + w.head_transient_bytes,
                                           w.head_forward_bytes + returned_at_forward_end);
  m.logits_loss_bytes = std::max(0.0, head_phase_bytes - block_phase_bytes);

  // Short-lived buffers: what an op holds beyond the activations alive as it runs (its buffers
  // and its saved group's gradient, less what its block's later ops keep), the cuBLAS workspace,
  // per-block communication buffers when sharded, and a root unit's gradients while whole.
  const RuntimeBytes runtime = runtime_bytes(cluster, c);
  const StateBytesPerParam per = state_bytes_per_param(precision);
  const double block = static_cast<double>(w.largest_block_params);
  double comm_buffers = 0.0;
  if (stage >= 2) comm_buffers += 2.0 * block * per.gradients;  // reduce-scatter buckets
  if (stage >= 3) comm_buffers += 2.0 * block * per.weights;    // gathered block + prefetch
  if (stage >= 3 && c.root_unit_gathered && cluster.world_size() > 1) {
    // The root unit, gathered for the whole micro-step.
    comm_buffers += root_params(params, w).all * per.weights;
  }
  m.temporary_bytes = w.op_buffer_bytes + runtime.workspace + comm_buffers + root_unit_bytes;
  const double after_backward =
      after_backward_bytes(params, full_gradients, precision, methods, cluster, w, c);
  // Where it passes what forward and backward held above every gradient, it is the peak.
  const double compute_phase = m.activations_bytes + m.gradients_bytes + root_unit_bytes +
                               m.logits_loss_bytes + w.op_buffer_bytes + cast_copies;
  m.temporary_bytes += std::max(0.0, full_gradients + after_backward - compute_phase);

  const double dynamic = m.total_bytes();
  m.framework_bytes = runtime.context + runtime.communicator;
  if (c.cuda_graphs && cuda_graphs_apply(methods, cluster)) {
    // The pool holds the micro-step's working set for the run (the engine empties the allocator's
    // cache before capture, so the eager warm-up's copy is not kept beside it), while the fused
    // optimizer's buffers, about one largest tensor, come on top. The working set's slack is the
    // allocator's below, once.
    m.graph_pool_bytes = w.max_tensor_bytes;
  }
  set_allocator_slack(m, dynamic, *cluster.gpu, c);
  return m;
}

}  // namespace gpudays
