// Forward workload of Mamba-1 (Gu and Dao 2023, "Mamba"), as HuggingFace's MambaForCausalLM runs
// it: RMSNorm, in_proj, causal depthwise conv1d, SiLU, x_proj, dt_proj, softplus, selective scan,
// gating, out_proj. Two scans: the fast fused kernel (states kept on chip, recomputed in
// backward) and the plain sequential scan (HuggingFace's slow path: discretised A and B*u
// materialised as [b, d_inner, T, d_state] fp32 tensors, then one step per token, each step's
// state saved by autograd).
#include "catalog/param_count.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

constexpr double kFp32 = 4.0;
// Selective-scan FLOPs per (token, channel, state): the Mamba reference implementation's FLOP
// count for the scan is 9 * B * L * D * N.
constexpr double kScanFlopsPerElement = 9.0;

void add_scan(
    std::vector<Op>& ops, double n, double e, double state, double elt, bool fast, double seq_len) {
  const double elements = n * e * state;
  Op scan;
  scan.cls = fast ? OpClass::kVector : OpClass::kMemory;
  scan.model_flops = kScanFlopsPerElement * elements;
  scan.exec_flops = scan.model_flops;
  if (fast) {
    scan.name = "selective_scan_fused";
    scan.bytes = (4.0 * n * e + 2.0 * n * state) * elt;  // read x, dt, z, B, C; write y
    scan.saved_bytes = (n * e + 2.0 * n * state) * elt;  // z and B, C (x, dt saved upstream)
    scan.kernels = 1.0;
    scan.backward_factor = 2.5;
  } else {
    scan.name = "selective_scan_sequential";
    scan.bytes = 8.0 * elements * kFp32;  // build dA, dBu; per step read/write state
    // dA, dBu and every step's state; and delta (fp32), which dA and dBu's products keep.
    scan.saved_bytes = 3.0 * elements * kFp32 + n * e * kFp32;
    scan.transient_bytes = 2.0 * elements * kFp32;
    scan.kernels = 4.0 + 3.0 * seq_len;  // one state update and readout per token
    scan.backward_factor = 2.0;
    // Fresh [b, d_inner, T, d_state] fp32 tensors: forward writes delta*A, its exp, delta*B and
    // delta*B*u; backward stacks the per-step gradients of dA and dBu (2), and the products'
    // gradients write exp's (1) and two for each of the three broadcast products (6).
    scan.fresh_tensor_bytes = elements * kFp32;
    scan.fresh_tensors_forward = 4.0;
    scan.fresh_tensors_backward = 9.0;
  }
  ops.push_back(scan);
}

}  // namespace

Workload build_mamba_workload(const ModelSpec& model, const WorkloadOptions& options) {
  const auto& a = model.arch;
  const double elt = options.activation_bytes;
  const double b = static_cast<double>(options.micro_batch_size);
  const double t = static_cast<double>(a.seq_len);
  const double n = b * t;
  const double d = static_cast<double>(a.d_model);
  const double e = static_cast<double>(a.expand * a.d_model);
  const double state = static_cast<double>(a.d_state);
  const double rank = static_cast<double>(a.dt_rank);
  Workload w;
  w.samples = options.micro_batch_size;
  w.tokens_per_sample = a.seq_len;
  w.stem_ops.push_back(make_memory("embed", 2 * n * d, elt, 0.0));

  Block block;
  block.name = "block";
  block.count = a.n_layers;
  block.input_bytes = n * d * elt;
  block.params = count_params(model).largest_block;
  block.param_tensors = 11;
  auto& ops = block.ops;
  // RMSNorm keeps its input and the normalised x (for the weight's gradient).
  ops.push_back(make_memory("rms_norm", 2 * n * d, elt, 2 * n * d * elt));
  Op in_proj = make_matmul("in_proj", n, 2 * e, d, elt);
  in_proj.saved_bytes = n * d * elt;
  ops.push_back(in_proj);
  // The conv keeps its input, a view of in_proj's output, so both halves (x and z) stay alive.
  Op conv = make_memory("conv1d", 2 * n * e, elt, 2 * n * e * elt);
  conv.cls = OpClass::kDepthwiseConv;  // a depthwise (grouped) Conv1d
  conv.model_flops = 2.0 * a.d_conv * n * e;
  conv.exec_flops = conv.model_flops;
  ops.push_back(conv);
  ops.push_back(make_memory("silu", 2 * n * e, elt, n * e * elt));
  Op x_proj = make_matmul("x_proj", n, rank + 2 * state, e, elt);
  x_proj.saved_bytes = n * e * elt;  // a contiguous copy of its (transposed) input
  ops.push_back(x_proj);
  Op dt_proj = make_matmul("dt_proj", n, e, rank, elt);
  dt_proj.saved_bytes = n * (rank + 2 * state) * elt;  // x_proj's output: delta, B and C views
  ops.push_back(dt_proj);
  ops.push_back(make_memory("softplus", 2 * n * e, elt, n * e * elt));
  add_scan(ops, n, e, state, elt, options.fast_scan, t);
  // The D skip keeps u; the gate's product keeps y + D u and SiLU(z).
  ops.push_back(make_memory("gate", 3 * n * e, elt, 3 * n * e * elt, 2));
  Op out_proj = make_matmul("out_proj", n, d, e, elt);
  out_proj.saved_bytes = n * e * elt;
  ops.push_back(out_proj);
  ops.push_back(make_memory("residual", 3 * n * d, elt, 0.0));
  w.blocks.push_back(block);

  w.head_ops.push_back(make_memory("final_norm", 2 * n * d, elt, 2 * n * d * elt));
  Op unembed = make_matmul("unembed", n, a.vocab_size, d, elt);
  unembed.saved_bytes = n * d * elt;
  w.head_ops.push_back(unembed);
  w.head_ops.push_back(make_cross_entropy(n, a.vocab_size, elt));
  w.param_tensors = a.n_layers * block.param_tensors + 2;
  return w;
}

}  // namespace gpudays
