// Forward workload of Mamba-1 (Gu and Dao 2023, "Mamba"), as HuggingFace's MambaForCausalLM runs
// it: RMSNorm, in_proj, causal depthwise conv1d, SiLU, x_proj, dt_proj, softplus, selective scan,
// gating, out_proj. Three scans, as the engine runs them (models/selective_scan.h): the plain
// sequential scan (HuggingFace's slow path: discretised A and B*u materialised as [b, d_inner, T,
// d_state] fp32 tensors, then a few small kernels per token, each step's state saved by autograd),
// and the fast scan of free-lunch: the fused CPU kernel on the host CPU (states in registers,
// recomputed in backward), the chunked ATen scan on a GPU (states materialised in memory, about
// chunk + T / chunk dependent kernels per pass, recomputed in backward).
#include <algorithm>
#include <cmath>

#include "catalog/param_count.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

constexpr double kFp32 = 4.0;
// Selective-scan FLOPs per (token, channel, state): the Mamba reference implementation's FLOP
// count for the scan is 9 * B * L * D * N.
constexpr double kScanFlopsPerElement = 9.0;
// Tokens per chunk of the chunked scan (models/selective_scan.h, kDefaultScanChunk).
constexpr double kScanChunk = 64.0;
// Tokens per chunk of mamba-ssm's CUDA scan, whose entering states it writes for backward
// (csrc/selective_scan: kChunkSize 2048).
constexpr double kCudaScanChunk = 2048.0;

// The fused CPU kernel (models/selective_scan_cpu.cpp): one pass over its inputs and output.
void add_fused_scan(std::vector<Op>& ops, double n, double e, double state, double elt) {
  Op scan;
  scan.name = "selective_scan_fused";
  scan.cls = OpClass::kVector;
  scan.model_flops = kScanFlopsPerElement * n * e * state;
  scan.exec_flops = scan.model_flops;
  scan.bytes = (4.0 * n * e + 2.0 * n * state) * elt;  // read x, dt, z, B, C; write y
  scan.saved_bytes = (n * e + 2.0 * n * state) * elt;  // z and B, C (x, dt saved upstream)
  scan.kernels = 1.0;
  scan.backward_factor = 2.5;
  ops.push_back(scan);
}

// The chunked ATen scan (models/selective_scan_chunked.cpp), counted in passes over its fp32
// [b, T', e, N] tensors (T' = T rounded up to whole chunks). Forward, 11 passes in about 20
// kernels: the token decays exp(delta A) (write, read and write: 3), the inputs delta u B (1), the
// decays from each chunk's start exp(A cumsum(delta)) (3), adding the states entering the chunks
// (read 2, write 1: 3), y = C . h as a batched matrix product (1). Backward, 22: the decays and
// inputs again (4), dC (1), the decayed previous states a_t h_{t-1} (3), the adjoints' source
// C dy (1), their decays to each chunk's end and the entering adjoints (6), dB and d(delta u)
// (2), the log-decays' gradient (3), d(delta) and dA from it (2). The backward holds three
// [b, T', e, N] tensors at once; it keeps from the forward one state per chunk.
void add_chunked_scan(std::vector<Op>& ops, double b, double t, double e, double state) {
  const double chunk = std::min(kScanChunk, t);
  const double chunks = std::ceil(t / chunk);
  const double elements = b * e * chunks * chunk * state;
  const double per_step = b * e * state;  // one token's (or one chunk's) [b, e, N] slice
  const double n = b * t;
  // The Function keeps delta, the fp32 copies of B and C (u is kept by the D skip anyway) and the
  // state entering each chunk.
  const double saved = (n * e + 2.0 * n * state + chunks * per_step) * kFp32;
  Op bulk = make_memory("selective_scan_chunked", 11.0 * elements, kFp32, saved, 20.0);
  bulk.model_flops = kScanFlopsPerElement * n * e * state;
  bulk.exec_flops = bulk.model_flops;
  bulk.transient_bytes = 3.0 * elements * kFp32;
  bulk.backward_factor = 22.0 / 11.0;
  ops.push_back(bulk);
  // The dependent steps: chunk - 1 through every chunk at once (h_t += a_t h_{t-1}: read 3, write
  // 1 of a [b, chunks, e, N] slice), then chunks - 1 carrying a [b, e, N] state across chunks (the
  // same). The backward runs the first twice (the states again, from the saved entering states,
  // then the adjoints) and the carry once.
  const double in_chunks = 4.0 * (chunk - 1.0) * chunks * per_step;
  const double across = 4.0 * (chunks - 1.0) * per_step;
  Op steps = make_memory(
      "selective_scan_chunked_steps", in_chunks + across, kFp32, 0.0, chunk + chunks - 2.0);
  steps.backward_factor = (2.0 * in_chunks + across) / (in_chunks + across);
  ops.push_back(steps);
}

// The plain scan (models/selective_scan.cpp, HuggingFace's slow path) in three parts, counted in
// passes over its fp32 tensors: the whole-sequence discretisation over [b, e, T, N], then T steps
// of small kernels over [b, e, N], each an ATen call of its own.
void add_plain_scan(std::vector<Op>& ops, double b, double t, double e, double state) {
  const double per_step = b * e * state;  // elements of one step's state
  const double elements = per_step * t;   // of one [b, e, T, N] tensor
  // Forward: delta*A (write), its exp (read, write), delta*B (write), times u (read, write): six
  // passes. Backward, 25: stacking the T per-step gradients of dA and dBu (read, write: 4); times
  // u's two products and the sum to u's shape (6); delta*B's two products and sums (6); exp's
  // product with its output (3); delta*A's two products and sums (6).
  Op discretise = make_memory("selective_scan_discretise", 6.0 * elements, kFp32, 0.0, 4.0);
  discretise.model_flops = kScanFlopsPerElement * elements;
  discretise.exec_flops = discretise.model_flops;
  discretise.saved_bytes = 2.0 * elements * kFp32 + b * t * e * kFp32;  // dA, dBu; delta
  discretise.transient_bytes = 2.0 * elements * kFp32;  // the stacked gradients in backward
  discretise.backward_factor = 25.0 / 6.0;
  ops.push_back(discretise);
  // Per step: state = dA_t * state (read 2, write 1) + dBu_t (read 2, write 1); autograd keeps
  // every state. Backward per step: the product's two gradients (3 passes each) and the sum of
  // the state's gradients from the next step and from the readout (3): 9 passes, 3 kernels.
  Op update =
      make_memory("selective_scan_update", 6.0 * elements, kFp32, elements * kFp32, 2.0 * t);
  update.backward_factor = 1.5;
  ops.push_back(update);
  // Per step: y_t = state @ C_t, a batched matrix-vector product: one kernel on a GPU, one BLAS
  // call per batch element on the host CPU (Op::batch); backward, two such products (the state's
  // gradient, an outer product, and C_t's). Time is in the calls, not the arithmetic.
  Op readout = make_memory("selective_scan_readout", 1.0 * elements, kFp32, 0.0, t);
  readout.batch = b;
  readout.backward_factor = 2.0;
  ops.push_back(readout);
}
// One Mamba block as the mamba-ssm package runs it (mamba_ssm/modules/mamba_simple.py, fast path;
// ops/selective_scan_interface.py, MambaInnerFn with its default checkpoint_lvl 1; Block with
// fused_add_norm and residual_in_fp32, ops/triton/layer_norm.py): the residual add and RMSNorm in
// one kernel that keeps an fp32 residual; in_proj; the causal conv1d with its SiLU in one kernel
// (causal_conv1d_fn); x_proj; delta by dt_proj; B and C copied contiguous; the fused selective
// scan (softplus, the scan, D skip and SiLU(z) gating in one kernel; states in registers, one per
// chunk of 2,048 tokens written for backward, the scan recomputed there); out_proj. MambaInnerFn
// keeps xz, x_proj's output, B, C and the scan's output; the conv output and delta are recomputed
// in backward (the conv and dt_proj run forward once more there).
void add_mamba_ssm_block(std::vector<Op>& ops,
                         double d_conv,
                         double b,
                         double t,
                         double d,
                         double e,
                         double state,
                         double rank,
                         double elt) {
  const double n = b * t;
  // Reads the block's output and the fp32 residual, writes the new fp32 residual and the
  // normalised input; keeps the residual and one fp32 rstd per token.
  Op norm = make_memory("add_rms_norm", n * d * (2.0 * elt + 2.0 * kFp32), 1.0, 0.0);
  norm.saved_bytes = n * d * kFp32 + n * kFp32;
  ops.push_back(norm);
  Op in_proj = make_matmul("in_proj", n, 2 * e, d, elt);
  in_proj.saved_bytes = n * d * elt + n * 2 * e * elt;  // its input; xz (kept by MambaInnerFn)
  ops.push_back(in_proj);
  Op conv = make_memory("causal_conv1d_silu", 2 * n * e, elt, 0.0);
  conv.cls = OpClass::kDepthwiseConv;
  conv.model_flops = 2.0 * d_conv * n * e;
  conv.exec_flops = conv.model_flops;
  conv.backward_factor = 3.0;  // recomputed forward, then its backward (input and weight)
  ops.push_back(conv);
  Op x_proj = make_matmul("x_proj", n, rank + 2 * state, e, elt);
  x_proj.saved_bytes = n * (rank + 2 * state) * elt;  // x_dbl
  ops.push_back(x_proj);
  Op dt_proj = make_matmul("dt_proj", n, e, rank, elt);
  dt_proj.backward_factor = 3.0;  // delta recomputed in backward
  ops.push_back(dt_proj);
  ops.push_back(make_memory("b_c_contiguous", 4 * n * state, elt, 2 * n * state * elt, 2));
  Op scan;
  scan.name = "selective_scan_cuda";
  scan.cls = OpClass::kVector;
  scan.model_flops = kScanFlopsPerElement * n * e * state;
  scan.exec_flops = scan.model_flops;
  // Reads u, delta, z, B and C; writes the scan's output and the gated output.
  scan.bytes = (5.0 * n * e + 2.0 * n * state) * elt;
  const double chunks = std::ceil(t / kCudaScanChunk);
  scan.saved_bytes = n * e * elt + b * e * chunks * 2.0 * state * kFp32;  // out; chunk states
  scan.backward_factor = 2.5;  // the forward again, then the reverse scan
  ops.push_back(scan);
  Op out_proj = make_matmul("out_proj", n, d, e, elt);  // its input recomputed by the scan's bwd
  ops.push_back(out_proj);
}

// The final norm, the unembedding and the loss (mamba-ssm: the fused add + RMSNorm, and
// flash-attn's in-place cross-entropy as the Mamba authors' and Samba's training code use it).
void add_mamba_head(
    Workload& w, const ArchSpec& a, double n, double d, double elt, bool mamba_ssm) {
  if (mamba_ssm) {
    // Keeps the fp32 residual sum and one fp32 rstd per token.
    w.head_ops.push_back(make_memory(
        "final_add_rms_norm", n * d * (2.0 * elt + kFp32), 1.0, n * d * kFp32 + n * kFp32));
  } else {
    w.head_ops.push_back(make_memory("final_norm", 2 * n * d, elt, 2 * n * d * elt));
  }
  Op unembed = make_matmul("unembed", n, a.vocab_size, d, elt);
  unembed.saved_bytes = n * d * elt;
  w.head_ops.push_back(unembed);
  w.head_ops.push_back(mamba_ssm ? make_inplace_cross_entropy(n, a.vocab_size, elt)
                                 : make_cross_entropy(n, a.vocab_size, elt));
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
  const bool mamba_ssm = options.implementation.code == ModelCode::kMambaSsm;
  if (mamba_ssm) {
    add_mamba_ssm_block(ops, static_cast<double>(a.d_conv), b, t, d, e, state, rank, elt);
    w.blocks.push_back(block);
    add_mamba_head(w, a, n, d, elt, mamba_ssm);
    w.param_tensors = a.n_layers * block.param_tensors + 2;
    return w;
  }
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
  if (options.fast_scan && options.device_kind == DeviceKind::kCpu) {
    add_fused_scan(ops, n, e, state, elt);
  } else if (options.fast_scan) {
    add_chunked_scan(ops, b, t, e, state);
  } else {
    add_plain_scan(ops, b, t, e, state);
  }
  // The D skip keeps u; the gate's product keeps y + D u and SiLU(z).
  ops.push_back(make_memory("gate", 3 * n * e, elt, 3 * n * e * elt, 2));
  Op out_proj = make_matmul("out_proj", n, d, e, elt);
  out_proj.saved_bytes = n * e * elt;
  ops.push_back(out_proj);
  ops.push_back(make_memory("residual", 3 * n * d, elt, 0.0));
  w.blocks.push_back(block);

  add_mamba_head(w, a, n, d, elt, mamba_ssm);
  w.param_tensors = a.n_layers * block.param_tensors + 2;
  return w;
}

}  // namespace gpudays
