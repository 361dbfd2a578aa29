// Time model. Ring collectives move (N-1)/N of the buffer per GPU for reduce-scatter and
// all-gather, twice that for all-reduce (Thakur et al. 2005; NCCL's "bus bandwidth"). Per
// optimizer step, with A accumulation micro-steps and gradient bytes G = g * P:
//   none:    all-reduce G once, overlapped with the last backward;
//   stage 1: reduce-scatter G once (overlapped), all-gather of updated weights (exposed);
//   stage 2: reduce-scatter G every micro-step (overlapped), all-gather of weights (exposed);
//   stage 3: every micro-step all-gathers weights for forward and backward and reduce-scatters G
//            (all overlapped with compute through prefetch).
#include "plan/time_model.h"

#include <algorithm>
#include <cmath>

#include "common/units.h"
#include "plan/memory_model.h"

namespace gpudays {
namespace {

double exposed_s(double comm_s, double compute_s, const TimeModelOptions& o) {
  if (comm_s <= 0.0) return 0.0;
  return std::max(comm_s - o.overlap_fraction * compute_s, o.min_exposed_fraction * comm_s);
}

// Optimizer kernels: the plain path launches about 10 kernels per parameter tensor; the fused
// multi-tensor path about 5 per chunk of 100 tensors.
double optimizer_kernels(int64_t param_tensors, bool fused) {
  const double tensors = static_cast<double>(param_tensors);
  return fused ? 5.0 * std::ceil(tensors / 100.0) : 10.0 * tensors;
}

// Mixed precision without sharding keeps only fp32 weights (the engine's autocast, as PyTorch
// AMP): every micro-step casts each weight to the compute dtype (read 4, write 2 bytes per
// parameter) and backward casts its gradient back to fp32 (read 2, write 4); from the second
// micro-step on, the gradient is added into the fp32 .grad (read 4 + 4, write 4). The sharded
// stages keep a half-precision working copy instead and pay none of this.
double autocast_weight_traffic_s(double params, double acc, const DeviceModel& device) {
  const double bytes = params * (12.0 * acc + 12.0 * (acc - 1.0));
  return bytes / device.bandwidth_bytes_per_s();
}

}  // namespace

double adam_step_bytes_per_param(bool fused, WeightDecay decay, double gradient_bytes) {
  const double g = gradient_bytes;
  if (fused) return 16.0 + 8.0 + g;  // moments and weight read and written once, gradient read
  // One kernel per line over the whole tensor, fp32 state (the engine's plain_step, as
  // torch.optim.AdamW's single-tensor path): exp_avg.lerp_(grad) reads 4 + g, writes 4;
  // exp_avg_sq.mul_ reads 4, writes 4, then addcmul_(grad, grad) reads 4 + 2g, writes 4;
  // denom = (sqrt / bias) + eps: three kernels, each reads 4 and writes 4; p.addcdiv_ reads
  // 12, writes 4. transformers.AdamW of the 4.x era moves the same (mul_ + add_ for the lerp,
  // no division). Decoupled weight decay (AdamW) adds p.mul_: read 4, write 4; Adam's L2 form
  // grad = grad.add(p, wd): read g + 4, write g.
  const double decay_bytes = decay == WeightDecay::kDecoupled ? 8.0
                             : decay == WeightDecay::kL2      ? 4.0 + 2.0 * g
                                                              : 0.0;
  return (8.0 + g) + 8.0 + (8.0 + 2.0 * g) + 24.0 + 16.0 + decay_bytes;
}

double sgd_nesterov_step_bytes_per_param(bool fused, double gradient_bytes) {
  const double g = gradient_bytes;
  if (fused) return 8.0 + 8.0 + g;  // momentum and weight read and written once, gradient read
  // torch.optim.SGD's single-tensor path: buf.mul_(momentum) reads 4, writes 4, then
  // add_(grad) reads 4 + g, writes 4; grad.add(buf, alpha=momentum) reads g + 4, writes g;
  // p.add_(grad, alpha=-lr) reads 4 + g, writes 4.
  return 8.0 + (8.0 + g) + (4.0 + 2.0 * g) + (8.0 + g);
}

bool is_pcie_link(const std::string& link) {
  return link.rfind("pcie", 0) == 0;
}

std::string CollectiveLink::name() const {
  switch (route) {
    case CollectiveRoute::kNone:
      return "none";
    case CollectiveRoute::kGpuLink:
      return link;
    case CollectiveRoute::kPairBridge:
      return "nvlink_bridge";
    case CollectiveRoute::kHostMemory:
      return "host_memory";
    case CollectiveRoute::kNetwork:
      return "network";
  }
  return "none";
}

// Within a node: without peer-to-peer every chunk is staged in host memory (NCCL_P2P_DISABLE=1
// turns off NVLink peer traffic too, so a bridge carries nothing); a bridged pair alone uses its
// bridge; otherwise the node's GPU link.
CollectiveLink collective_link(const Cluster& cluster, const TimeModelOptions& o) {
  const GpuSpec& gpu = *cluster.gpu;
  if (cluster.world_size() < 2) return {};
  CollectiveLink out;
  if (!o.links.peer_to_peer_on(gpu)) {
    out = {CollectiveRoute::kHostMemory,
           gpu.host_link,
           gpu.host_link_gb_per_s * kGB * o.host_staged_efficiency};
  } else if (cluster.num_nodes == 1 && cluster.gpus_per_node == 2 && o.links.pair_bridged(gpu)) {
    out = {CollectiveRoute::kPairBridge,
           "nvlink_bridge",
           gpu.pair_bridge_gb_per_s * kGB * o.nvlink_efficiency};
  } else {
    const double eff = is_pcie_link(gpu.gpu_link) ? o.pcie_efficiency : o.nvlink_efficiency;
    out = {CollectiveRoute::kGpuLink, gpu.gpu_link, gpu.gpu_link_gb_per_s * kGB * eff};
  }
  const double network = o.inter_node_gb_per_s * kGB * o.network_efficiency;
  if (cluster.num_nodes > 1 && network < out.bus_bytes_per_s) {
    out = {CollectiveRoute::kNetwork, "network", network};
  }
  return out;
}

double collective_bandwidth_bytes_per_s(const Cluster& cluster, const TimeModelOptions& o) {
  return collective_link(cluster, o).bus_bytes_per_s;
}

TimeBreakdown predict_step_time(double params,
                                Precision precision,
                                const MethodSet& methods,
                                const Cluster& cluster,
                                int64_t grad_acc_steps,
                                const WorkloadSummary& w,
                                const DeviceModel& device,
                                const TimeModelOptions& o) {
  TimeBreakdown t;
  const double acc = static_cast<double>(grad_acc_steps);
  const double n = static_cast<double>(cluster.world_size());
  t.compute_s = acc * (w.forward_s + w.backward_s);
  if (methods.activation_checkpointing) t.recompute_s = acc * w.recompute_s;

  const StateBytesPerParam per = state_bytes_per_param(precision);
  const int stage = sharding_stage(methods.sharding);
  const bool mixed = precision != Precision::kFp32;
  const bool fp32_weights =
      (stage == 0 && !o.half_precision_model) || (stage == 1 && o.autocast_fp32_weights_at_stage_1);
  if (mixed && fp32_weights) t.compute_s += autocast_weight_traffic_s(params, acc, device);
  const double local_params = stage >= 1 ? params / n : params;
  const Fp16OptimizerExtra code_extra =
      fp16_optimizer_extra(o.fp16_optimizer, params, w.param_tensors, w.layers, per.gradients, n);
  if (n > 1) {
    const double bw = collective_bandwidth_bytes_per_s(cluster, o);
    const double shard_s = (n - 1) / n * params * per.gradients / bw;  // one RS or AG
    // Nothing hides a collective that starts after the whole backward.
    const double backward_s =
        code_extra.serial_gradient_collectives
            ? 0.0
            : w.backward_s + (methods.activation_checkpointing ? w.recompute_s : 0.0);
    switch (stage) {
      case 0:
        t.communication_s = exposed_s(2 * shard_s, backward_s, o);
        break;
      case 1:
        t.communication_s = exposed_s(shard_s, backward_s, o) + shard_s;
        break;
      case 2:
        t.communication_s = acc * exposed_s(shard_s, backward_s, o) + shard_s;
        break;
      default:
        t.communication_s =
            acc * (exposed_s(shard_s, w.forward_s, o) + exposed_s(2 * shard_s, backward_s, o));
    }
  }

  const double host_bw = cluster.gpu->host_link_gb_per_s * kGB * o.host_link_efficiency;
  if (methods.offloading) {
    const double shard_bytes = local_params * per.weights;
    const double cpu_rate = o.cpu_adam_params_per_s / static_cast<double>(cluster.gpus_per_node);
    t.offload_s = exposed_s(shard_bytes / host_bw, w.backward_s, o) /*gradients to host*/ +
                  local_params / cpu_rate /*CPU Adam*/ + shard_bytes / host_bw /*weights back*/;
    if (stage >= 3) t.offload_s += acc * exposed_s(2 * shard_bytes / host_bw, w.forward_s, o);
  } else {
    // The update runs on fp32 gradients (fp32 .grad under autocast; a sharded stage's
    // half-precision gradient shard is cast first: read 2, write 4) and fp32 state (Adam:
    // adam_step_bytes_per_param; SGD where a measured stack ran it). fp16's dynamic loss scaling
    // first unscales the gradients (GradScaler's multi-tensor kernel: read and write each);
    // clipping (torch's clip_grad_norm_) reads them for the norm and scales them (read, write).
    // Under mixed precision with a working copy, the updated master writes it (read 4, write 2).
    // Gradients are set to None rather than zeroed (torch 2, the engine).
    constexpr double kFp32 = 4.0;
    const double cast_bytes = per.gradients < kFp32 && !fp32_weights ? per.gradients + kFp32 : 0.0;
    const bool fused = o.fused_optimizer.value_or(methods.free_lunch);
    const double update_bytes = o.optimizer == OptimizerUpdate::kSgdNesterov
                                    ? sgd_nesterov_step_bytes_per_param(fused, kFp32)
                                    : adam_step_bytes_per_param(fused, o.weight_decay, kFp32);
    const bool unscales = precision == Precision::kFp16 && o.fp16_loss_scaling;
    const double unscale_bytes = unscales ? 2.0 * kFp32 : 0.0;
    const double clip_bytes = 3.0 * kFp32;
    const double working_copy_bytes = mixed && !fp32_weights ? kFp32 + per.weights : 0.0;
    const double bytes_per_param =
        cast_bytes + unscale_bytes + clip_bytes + update_bytes + working_copy_bytes;
    const double memory_s = local_params * bytes_per_param / device.bandwidth_bytes_per_s();
    // A Python stack's optimizer loops over the tensors in Python (torch.optim's single-tensor
    // path, transformers' AdamW); the engine's in C++.
    const double dispatch_s =
        optimizer_kernels(w.param_tensors, fused) * device.host_dispatch_s(w.python_forward);
    t.optimizer_s = std::max(memory_s, dispatch_s) + fp16_optimizer_extra_s(code_extra, device);
  }
  if (methods.activation_checkpointing && o.checkpoint_inputs_on_host) {
    t.offload_s += acc * 2.0 * w.checkpointed_input_bytes / host_bw;  // to the host and back
  }
  return t;
}

}  // namespace gpudays
