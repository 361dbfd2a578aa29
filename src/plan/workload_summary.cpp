// Summation of a workload's operations under a device model.
#include "plan/workload_summary.h"

#include <algorithm>

namespace gpudays {
namespace {

struct OpTotals {
  double forward_s = 0.0, backward_s = 0.0, saved = 0.0, transient = 0.0, tensor = 0.0, flops = 0.0;
  // The most any op holds beyond the ops' activations alive while it runs: its buffers and its
  // saved group's gradient, less what the ops after it keep (in forward not yet allocated, in
  // backward already freed).
  double buffers_beyond = 0.0;
  double device_s = 0.0;  // forward and backward kernels on the GPU, whatever the host's pace
  double exec_flops = 0.0;
  // Under a per-op checkpointing policy: what it keeps, and what it recomputes.
  double policy_kept = 0.0, recompute_s = 0.0, recompute_flops = 0.0, recompute_exec_flops = 0.0;
};

// The GPU's and the host's time for a run of kernels. The host issues kernels ahead of the GPU
// into its launch queue, so the run takes the slower of the two sums (docs/planner.md, "Host and
// GPU"): a GPU busy with large GEMMs hides the launches of the small kernels between them.
struct Queue {
  double device_s = 0.0, host_s = 0.0;
  double time_s() const { return std::max(device_s, host_s); }
};

OpTotals total(const std::vector<Op>& ops, const DeviceModel& device, bool python) {
  OpTotals t;
  Queue forward, backward, recompute;
  for (const Op& op : ops) {
    forward.device_s += device.op_time_s(op, /*backward=*/false);
    forward.host_s += device.op_host_s(op, /*backward=*/false, python);
    backward.device_s += device.op_time_s(op, /*backward=*/true);
    backward.host_s += device.op_host_s(op, /*backward=*/true, python);
    t.saved += op.saved_bytes;
    t.transient = std::max(t.transient, op.transient_bytes);
    t.tensor = std::max(t.tensor, op.saved_bytes);
    t.flops += op.model_flops;
    t.exec_flops += op.exec_flops;
    const double recomputed = 1.0 - op.policy_kept_share;
    t.policy_kept += op.policy_kept_bytes;
    recompute.device_s += recomputed * device.op_time_s(op, /*backward=*/false);
    recompute.host_s += recomputed * device.op_host_s(op, /*backward=*/false, python);
    t.recompute_flops += recomputed * op.model_flops;
    t.recompute_exec_flops += recomputed * op.exec_flops;
  }
  double saved_after = t.saved;
  for (const Op& op : ops) {
    saved_after -= op.saved_bytes;
    t.buffers_beyond =
        std::max(t.buffers_beyond, op.transient_bytes + op.saved_bytes - saved_after);
  }
  t.device_s = forward.device_s + backward.device_s;
  t.forward_s = forward.time_s();
  t.backward_s = backward.time_s();
  t.recompute_s = recompute.time_s();
  return t;
}

}  // namespace

WorkloadSummary summarize(const Workload& w, const DeviceModel& device) {
  WorkloadSummary s;
  const bool python = w.python_forward;
  const OpTotals stem = total(w.stem_ops, device, python);
  const OpTotals head = total(w.head_ops, device, python);
  s.forward_s = stem.forward_s + head.forward_s;
  s.backward_s = stem.backward_s + head.backward_s;
  s.stem_saved_bytes = stem.saved;
  s.head_saved_bytes = head.saved;
  s.head_transient_bytes = head.transient;
  s.head_forward_bytes = head.saved + w.head_forward_extra_bytes;
  s.head_output_bytes = w.head_output_bytes;
  s.holds_output = w.holds_output;
  s.max_tensor_bytes = stem.tensor;  // the head's gradient buffers are in head_transient_bytes
  // The stem's ops run before every block in forward and after them in backward: counted whole.
  s.op_buffer_bytes = stem.transient + stem.tensor;
  double forward_flops = stem.flops + head.flops;
  double forward_exec_flops = stem.exec_flops + head.exec_flops;
  // Checkpointed blocks: a share p of each kind (the whole block's count when p = 1).
  const double p = w.checkpointed_block_share;
  for (const Block& b : w.blocks) {
    const OpTotals t = total(b.ops, device, python);
    if (&b == &w.blocks.front()) {
      s.layer_device_s = t.device_s;
      s.layers = b.count;
    }
    s.forward_s += b.count * t.forward_s;
    s.backward_s += b.count * t.backward_s;
    s.recompute_s += p * b.count * t.recompute_s;
    s.block_saved_bytes += b.count * t.saved;
    s.checkpointed_block_bytes +=
        b.count * (p * (b.input_bytes + t.policy_kept) + (1.0 - p) * t.saved);
    s.returned_bytes += b.count * b.returned_bytes;
    s.checkpointed_input_bytes += p * b.count * b.input_bytes;
    s.max_block_input_bytes = std::max(s.max_block_input_bytes, b.input_bytes);
    // While a block is recomputed its other activations join what the policy kept of it.
    s.max_block_saved_bytes = std::max(s.max_block_saved_bytes, t.saved - t.policy_kept);
    s.max_tensor_bytes = std::max(s.max_tensor_bytes, t.tensor);
    s.op_buffer_bytes = std::max(s.op_buffer_bytes, t.buffers_beyond);
    forward_flops += b.count * t.flops;
    forward_exec_flops += b.count * t.exec_flops;
    s.recompute_flops += p * b.count * t.recompute_flops;
    s.recompute_exec_flops += p * b.count * t.recompute_exec_flops;
    s.largest_block_params = std::max(s.largest_block_params, b.params);
    s.blocks_params += static_cast<double>(b.count * b.params);
  }
  s.model_flops = kTrainingFlopsPerForwardFlop * forward_flops;
  s.exec_flops = kTrainingFlopsPerForwardFlop * forward_exec_flops;
  s.param_tensors = w.param_tensors;
  s.largest_param_tensor = w.largest_param_tensor;
  s.input_only_embedding_params = w.input_only_embedding_params;
  s.samples = w.samples;
  s.tokens_per_sample = w.tokens_per_sample;
  s.python_forward = w.python_forward;
  return s;
}

}  // namespace gpudays
