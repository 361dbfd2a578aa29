// Forward workload of the transformer families: gpt_neox (Pythia; parallel residual, rotary,
// causal), llama (pre-RMSNorm, SwiGLU, grouped-query attention, rotary, causal), roberta (post-LN
// encoder, MLM head over every position) and vit (pre-LN encoder, patch embedding, classifier).
// Saved activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", Section 4.1, per tensor and per dtype. The pointwise parts take the kernels
// of the model code that runs them (ModelCode) and, under torch.compile, one fused kernel per chain
// (docs/planner.md, "Model code and torch.compile").
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "catalog/family_traits.h"
#include "catalog/param_count.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

constexpr double kFp32 = 4.0;
constexpr double kMaskBytes = 1.0;  // dropout masks are stored as bytes

struct Dims {
  double b, t, n, d, f, h, hd;  // batch, seq, tokens (b*t), width, ffn, heads, head dim
  double elt;                   // bytes per activation element
  double dropout;
  double kv;  // key/value width: d, or kv heads x head dim with grouped-query attention
  double q;   // query (and attention output) width: heads x head dim, d but with llama's head_dim
  bool rms_norm;  // RMSNorm (llama) rather than LayerNorm
  Implementation impl;
  // The FlashAttention repository's own GPT (flash_attn/models/gpt.py, the gpt_neox family's
  // GPT-2 and GPT-3 shapes): packed qkv, fp32 residual, dropout_add_layer_norm. Other code that
  // calls flash-attn's kernels (lit_gpt's Llama in the Samba case) has none of these.
  bool flash_attn_gpt;
  // On the host CPU, where ATen's dropout multiplies by a noise tensor of its input's type and
  // keeps that, not CUDA's byte mask (native_dropout).
  bool host_cpu;
};

// What a dropout over elements of `input_elt` bytes keeps for backward besides its output: CUDA's
// native_dropout a byte mask, the host CPU's dropout its noise tensor (at::dropout: input * noise).
double kept_mask_bytes(const Dims& x, double input_elt) {
  return x.host_cpu ? input_elt : kMaskBytes;
}

// Dropout over `elements` that keeps `saved_bytes` (its byte mask, and what else backward needs):
// eagerly its own kernel, reading the input and writing the output; `fused` into the chain around
// it (compiled: the residual add and norm after a projection, the softmax before the attention's
// second product; or a hand-written kernel), it adds only the mask's write (the random numbers are
// drawn inside that kernel).
Op make_dropout(const char* name, double elements, const Dims& x, double saved_bytes, bool fused) {
  if (fused) return make_memory(name, elements * kMaskBytes, 1.0, saved_bytes, /*kernels=*/0.0);
  // native_dropout writes the output and its byte mask; its backward reads the gradient and the
  // mask and writes one gradient (aten/src/ATen/native/cuda/Dropout.cu): as much as the forward.
  Op op = make_memory(name, elements, 2.0 * x.elt + kMaskBytes, saved_bytes);
  return with_backward(op, op.bytes, 1.0);
}

// The backward of a pointwise operation of one input (GELU, a scale by a constant, a copy back):
// it reads the output's gradient (and the input, for GELU) and writes one gradient.
Op with_backward_passes(Op op, double passes_per_element, double elements, double elt) {
  const double kernels = op.kernels;
  return with_backward(std::move(op), passes_per_element * elements * elt, kernels);
}

// Whether the dropout on the hidden state (after each projection, and the embedding's) is part of
// a fused kernel: compiled, or the FlashAttention repository's GPT, whose training configurations
// all set fused_dropout_add_ln (flash_attn/ops/layer_norm.py dropout_add_layer_norm: dropout,
// residual add and LayerNorm in one kernel).
bool hidden_dropout_fused(const Dims& x) {
  return x.impl.compiled || x.flash_attn_gpt;
}

// A chain of pointwise and reduction kernels over `elements`: eagerly `eager_bytes` per element in
// `eager_kernels` launches, each kernel reading its inputs and writing its output; compiled
// (TorchInductor), one generated kernel that reads the chain's inputs and writes its outputs once,
// `fused_bytes` per element.
Op make_chain(const char* name,
              double elements,
              double eager_bytes,
              double eager_kernels,
              double fused_bytes,
              double saved_bytes,
              bool compiled) {
  return compiled ? make_memory(name, elements * fused_bytes, 1.0, saved_bytes, /*kernels=*/1)
                  : make_memory(name, elements * eager_bytes, 1.0, saved_bytes, eager_kernels);
}

// Bytes per element of an upcast to fp32 and of the cast back (none when already fp32).
double upcast_bytes(double elt) {
  return elt < kFp32 ? elt + kFp32 : 0.0;
}

// A normalisation over the hidden state (keeps its input for backward unless `keeps_input`; an
// RMSNorm also keeps the normalised input its weight multiplies).
Op make_norm(const char* name, const Dims& x, bool keeps_input) {
  const double hidden = x.n * x.d;
  // The FlashAttention repository's GPT keeps its residual stream in fp32 (hard-coded in
  // flash_attn/models/gpt.py before 2023-01, the configs' residual_in_fp32 since):
  // dropout_add_layer_norm saves that fp32 sum for backward.
  const double input_bytes = x.flash_attn_gpt ? kFp32 : x.elt;
  const double saved =
      (keeps_input ? hidden * input_bytes : 0.0) + (x.rms_norm ? hidden * x.elt : 0.0);
  const double minimal = 2.0 * x.elt;  // read the input, write the output
  const bool rms_chain = x.impl.code == ModelCode::kLlamaReference ||
                         (x.impl.code == ModelCode::kHuggingFace && x.rms_norm);
  // dropout_add_layer_norm (flash_attn/ops/layer_norm.py): one kernel adds the branch's output
  // (elt) to the fp32 residual, writes the new residual (4) and the normalised output (elt);
  // backward reads the output's gradient, the kept sum and the residual's gradient and writes the
  // gradients of both inputs (its launches, forward and backward, are counted as one each). The
  // block's residual adds are these. A parallel block's second LayerNorm reads the same sum: a
  // plain LayerNorm.
  if (x.impl.fp32_residual_stream && x.elt < kFp32 && !x.impl.compiled) {
    // Autocast's fp32 LayerNorm over the fp32 residual stream, then the next Linear's cast down;
    // backward, the norm's in fp32 and the cast's (the gradient cast up).
    const double kept = (keeps_input ? hidden * kFp32 : 0.0) + (x.rms_norm ? hidden * x.elt : 0.0);
    return with_backward(make_memory(name, hidden, 3.0 * kFp32 + x.elt, kept, /*kernels=*/2),
                         hidden * (4.0 * kFp32 + kFp32 + x.elt),
                         3.0);
  }
  if (x.flash_attn_gpt && keeps_input) {
    Op op = make_memory(name, hidden, 2.0 * x.elt + 2.0 * kFp32, saved);
    op.backward_factor = (2.0 * x.elt + 3.0 * kFp32) / (2.0 * x.elt + 2.0 * kFp32);
    return op;
  }
  switch (rms_chain ? ModelCode::kLlamaReference : x.impl.code) {
    case ModelCode::kLlamaReference: {
      // (LlamaRMSNorm in transformers is the same chain: to(float32), pow, mean, rsqrt, product,
      // cast back, product with the weight.)
      // RMSNorm: x.float(); x.pow(2); .mean(-1); + eps; rsqrt; x * rsqrt; .type_as(x); * weight
      // (llama/model.py): the two fp32 products read and write 4 bytes, the mean reads 4.
      const double eager = 2.0 * upcast_bytes(x.elt) + 8.0 + 4.0 + 8.0 + 2.0 * x.elt;
      return make_chain(name, hidden, eager, 8, minimal, saved, x.impl.compiled);
    }
    case ModelCode::kHuggingFace:
      // Autocast runs layer_norm in fp32 (its fp32 list) and the next Linear casts the output
      // back: LayerNorm reads elt, writes 4; the cast reads 4, writes elt.
      return make_chain(
          name, hidden, x.elt + kFp32 + kFp32 + x.elt, 2, minimal, saved, x.impl.compiled);
    case ModelCode::kEngine:
    case ModelCode::kMambaSsm:  // Mamba only: planned as the engine here
    case ModelCode::kFlashAttn:
    case ModelCode::kLlmC:
      break;
  }
  return make_memory(name, 2 * hidden, x.elt, saved);
}

// Position information inside the layer: rotary embeddings of q and k, or none (a learned table
// is added once, in the stem).
void add_rotary(std::vector<Op>& ops, const ModelSpec& model, const Dims& x) {
  if (model.arch.learned_position_embeddings) return;
  const double rotated = x.n * (x.q + x.kv) * model.arch.rotary_pct;  // q and k elements
  switch (x.impl.code) {
    case ModelCode::kLlamaReference:
      // apply_rotary_emb: q.float() -> view_as_complex -> * freqs_cis -> view_as_real ->
      // .type_as(q), for q and for k: an upcast, an fp32 complex product, a cast back.
      ops.push_back(make_chain("rotary",
                               rotated,
                               2.0 * upcast_bytes(x.elt) + 8.0,
                               6,
                               2.0 * x.elt,
                               0.0,
                               x.impl.compiled));
      return;
    case ModelCode::kEngine:
    case ModelCode::kMambaSsm:  // Mamba only: planned as the engine here
    case ModelCode::kHuggingFace:
    case ModelCode::kFlashAttn:
    case ModelCode::kLlmC:
      // GPT-NeoX's rotate_half form: q*cos + rotate_half(q)*sin and the concatenation with the
      // unrotated part, in four kernels over q and k.
      ops.push_back(
          make_chain("rotary", rotated, 4.0 * x.elt, 4, 2.0 * x.elt, 0.0, x.impl.compiled));
      return;
  }
}

// transformers' gelu_new as eager kernels. In fp32: eight kernels, six of one input (read, write)
// and two of two; backward, the products' two gradients, tanh's and pow's (pow, a scale and the
// product: three kernels) and two adds gathering x's three gradients. Under autocast torch.pow
// runs in fp32 (autocast's fp32 list), so x is cast up, everything after the power is promoted to
// fp32 but the half-precision 0.5 * x, and the next Linear casts the result down: forward
// 6h + 64 bytes per element in ten kernels (h: the half type's bytes), backward 13h + 92 in
// fifteen, gradients cast back to each input's type (autograd). Compiled: one kernel each way.
Op gelu_new_chain(double elements, const Dims& x, double saved_bytes) {
  if (x.impl.compiled) {
    return make_memory("gelu_new", 2.0 * elements, x.elt, saved_bytes, /*kernels=*/1);
  }
  const bool autocast = x.elt < kFp32;
  const double h = x.elt;
  return with_backward(
      make_memory(
          "gelu_new", elements, autocast ? 6.0 * h + 64.0 : 72.0, saved_bytes, autocast ? 10 : 8),
      elements * (autocast ? 13.0 * h + 92.0 : 112.0),
      autocast ? 15.0 : 11.0);
}

// The MLP's activation over n x f elements: GELU, or SiLU(gate) x up for a gated MLP.
Op make_activation(const ModelSpec& model, const Dims& x) {
  const double elements = x.n * x.f;
  if (model.arch.gated_ffn) {
    // gate and up, and silu(gate) for the product's backward (a compiled chain recomputes it)
    const double saved = (x.impl.compiled ? 2.0 : 3.0) * elements * x.elt;
    if (x.impl.code == ModelCode::kLlamaReference) {
      // w2(F.silu(w1(x)) * w3(x)): SiLU reads and writes, the product reads two and writes one.
      return make_chain("silu_mul", elements, 5.0 * x.elt, 2, 3.0 * x.elt, saved, x.impl.compiled);
    }
    return make_memory("silu_mul", 3.0 * elements, x.elt, saved);
  }
  const double saved = elements * x.elt;
  // transformers' GPT-2 (learned positions in the gpt_neox family) activates with gelu_new; its
  // GPT-NeoX and BERT/RoBERTa code with the exact GELU (hidden_act "gelu"), one kernel.
  const bool gelu_new = model.family == Family::kGptNeox && model.arch.learned_position_embeddings;
  switch (x.impl.code) {
    case ModelCode::kHuggingFace:
      if (!gelu_new) break;
      // gelu_new (transformers activations.py NewGELUActivation): 0.5 * x * (1 + tanh(sqrt(2/pi)
      // * (x + 0.044715 * x^3))); autograd keeps x, the tanh, 0.5 * x and 1 + tanh.
      return gelu_new_chain(elements, x, 4.0 * saved);
    case ModelCode::kFlashAttn:
      // FusedMLP: GELU in the first GEMM's epilogue, which also writes the pre-activation for the
      // backward GEMM's epilogue to read: no launch of its own.
      return make_memory("gelu_epilogue", elements, x.elt, saved, /*kernels=*/0);
    case ModelCode::kEngine:
    case ModelCode::kMambaSsm:  // Mamba only: planned as the engine here
    case ModelCode::kLlamaReference:
    case ModelCode::kLlmC:
      break;
  }
  // GELU's backward reads the output's gradient and the input and writes one gradient.
  return with_backward_passes(
      make_memory("gelu", 2.0 * elements, x.elt, saved), 3.0, elements, x.elt);
}

// Whether the plain attention's softmax runs in fp32 and its output is cast down for the second
// product (score_chain: transformers' eager code and the engine under autocast), so that two
// tensors are kept per score: the fp32 output (softmax's backward) and the compute-dtype copy
// (the second product's input). The FlashAttention GPT, a half-precision model and compiled code
// keep one.
bool softmax_keeps_a_cast(const Dims& x) {
  if (x.impl.compiled || x.elt >= kFp32 || x.impl.half_precision_model) return false;
  return x.impl.code != ModelCode::kFlashAttn;
}

// Plain attention from the scores to the probabilities the second product reads, as each stack's
// code runs it, forward and backward (autograd: a mask add's backward launches nothing; a scale's
// and masked_fill's one kernel each, reading and writing the gradient; softmax's backward reads
// the output and its gradient and writes one, _softmax_backward_data; a cast's backward is a
// cast).
Op score_chain(const Dims& x, double scores, bool causal, bool bert) {
  const double e = x.elt;
  const bool half = e < kFp32;
  if (x.impl.compiled) {
    // One generated kernel reads the scores and writes the probabilities; its backward reads
    // both gradients' inputs and writes one.
    return with_backward(
        make_memory("softmax", scores * 2.0, e, scores * e, /*kernels=*/1), scores * 3.0 * e, 1.0);
  }
  double forward = 0.0, backward = 0.0, kernels = 0.0, backward_kernels = 0.0;
  double saved = 0.0, transient = 0.0;
  auto kernel = [&](double bytes, double backward_bytes) {
    forward += bytes;
    kernels += 1.0;
    backward += backward_bytes;
    backward_kernels += backward_bytes > 0.0 ? 1.0 : 0.0;
  };
  if (x.impl.code == ModelCode::kHuggingFace && !x.impl.half_precision_model) {
    // GPT-2's _attn (transformers 4.x): the scores divided by sqrt(head dim) and masked by
    // torch.where in the half type, softmax to fp32 (autocast's fp32 list) and the cast back for
    // the second product; in fp32 no cast. BERT's self-attention adds its extended attention mask
    // instead, an fp32 tensor (modeling_utils get_extended_attention_mask): under autocast the sum
    // is fp32, so softmax and the attention dropout run in fp32, and the second product's
    // autocast casts the probabilities down.
    kernel(2.0 * e, 2.0 * e);  // / sqrt(head dim)
    if (bert) {
      kernel(half ? e + kFp32 : 2.0 * e, half ? kFp32 + e : 0.0);  // + mask; its gradient cast
      kernel(half ? 2.0 * kFp32 : 2.0 * e, half ? 3.0 * kFp32 : 3.0 * e);  // softmax
    } else {
      kernel(2.0 * e, 2.0 * e);  // torch.where(mask, s, min)
      kernel(half ? e + kFp32 : 2.0 * e, half ? 2.0 * kFp32 + e : 3.0 * e);  // softmax
    }
    if (half) kernel(kFp32 + e, e + kFp32);  // .type(value.dtype), or autocast's cast
    saved = half ? scores * (kFp32 + e) : scores * kFp32;
    transient = scores * kFp32 * 2.0;
  } else if (x.impl.code == ModelCode::kFlashAttn || x.impl.half_precision_model) {
    // flash_attn/modules/mha.py SelfAttention: the causal mask added to the scores, then
    // torch.softmax(scores, dtype=v.dtype); a half-precision model without autocast (apex O2)
    // likewise: probabilities in the compute dtype, kept once. The kernels before the softmax
    // (attention_score_kernels) read and write the scores; one of them (a scale of its own, or
    // Megatron-LM's masked_fill_) has a backward, a mask add has none.
    const bool flash_attn = x.impl.code == ModelCode::kFlashAttn;
    const int before = flash_attn ? 1 : x.impl.attention_score_kernels;
    for (int i = 0; i < before; ++i) kernel(2.0 * e, !flash_attn && i == 0 ? 2.0 * e : 0.0);
    kernel(2.0 * e, 3.0 * e);  // softmax
    saved = scores * e;
    transient = scores * e * 2.0;
  } else {
    // The engine (models/attention.cpp attend_plain): the scores times the scale, masked_fill
    // where a mask applies (causal), softmax in at least fp32 and the cast back.
    kernel(2.0 * e, 2.0 * e);                                              // * scale
    if (causal) kernel(2.0 * e, 2.0 * e);                                  // masked_fill
    kernel(half ? e + kFp32 : 2.0 * e, half ? 2.0 * kFp32 + e : 3.0 * e);  // softmax
    if (half) kernel(kFp32 + e, e + kFp32);                                // .to(q's type)
    saved = half ? scores * (kFp32 + e) : scores * kFp32;
    transient = scores * kFp32 * 2.0;
  }
  Op op = with_backward(
      make_memory("softmax", scores, forward, saved, kernels), scores * backward, backward_kernels);
  op.transient_bytes = transient;
  return op;
}

// `bert`: transformers' BERT/RoBERTa self-attention (an fp32 mask added to the scores).
void add_attention(std::vector<Op>& ops, const Dims& x, bool fused, bool causal, bool bert) {
  const double scores = x.b * x.h * x.t * x.t;
  const double attn_flops = 4.0 * x.b * x.h * x.t * x.t * x.hd;  // QK^T and AV, non-causal count
  if (fused) {
    Op op;
    op.name = "fused_attention";
    op.cls = OpClass::kFusedAttention;
    op.model_flops = attn_flops;
    op.exec_flops = causal ? attn_flops / 2 : attn_flops;
    const double qkvo = 2.0 * x.n * x.q + 2.0 * x.n * x.kv;   // q and out, k and v
    op.bytes = qkvo * x.elt;                                  // read q, k, v; write out
    op.saved_bytes = qkvo * x.elt + x.b * x.h * x.t * kFp32;  // q, k, v, out, lse
    op.backward_factor = 2.5;                                 // FlashAttention-2, Sec. 3
    op.attention_kernel = attention_kernel(x.impl);
    op.m = x.t;
    op.n = x.t;
    op.k = x.hd;
    ops.push_back(op);
    return;
  }
  // With grouped-query attention the plain path repeats each key/value head for its group
  // (transformers' repeat_kv, the engine's plain path): the products keep the repeated k and v.
  Op qk = make_matmul("attention_qk", x.t, x.t, x.hd, x.elt, x.b * x.h);
  qk.saved_bytes = 2.0 * x.n * x.q * x.elt;  // q, k (repeated to q's width)
  ops.push_back(qk);
  ops.push_back(score_chain(x, scores, causal, bert));
  if (x.dropout > 0.0) {
    Dims probabilities = x;  // BERT's under autocast are fp32 (score_chain)
    if (bert && x.elt < kFp32 && !x.impl.half_precision_model) probabilities.elt = kFp32;
    // The second product keeps the dropout's output in the compute dtype. Where the softmax's op
    // already counts that copy (its cast), the tensor the cast wrote is the dropout's input, which
    // CUDA's native_dropout does not keep: only its byte mask is new (7 bytes per score in half
    // precision, not 9; BERT's fp32 dropout under autocast, 7 rather than 11). On the host CPU the
    // mask is a noise tensor of the probabilities' type.
    const double kept = softmax_keeps_a_cast(x) ? 0.0 : x.elt;
    ops.push_back(make_dropout("attention_dropout",
                               scores,
                               probabilities,
                               scores * (kept_mask_bytes(x, probabilities.elt) + kept),
                               x.impl.compiled));
  }
  Op av = make_matmul("attention_av", x.t, x.hd, x.t, x.elt, x.b * x.h);
  av.saved_bytes = x.n * x.q * x.elt;  // v, repeated (probabilities counted above)
  ops.push_back(av);
}

// llm.c's residual stream (train_gpt2.cu at a0d5dbb): fused_residual_forward5 adds a branch's
// output to the residual and normalises the sum in one kernel, which writes both; the norm's read
// and write are the norm's (make_norm), so each add moves the branch's output in and the sum out
// with no launch of its own. Backward, layernorm_backward accumulates into the one residual
// gradient buffer (+=) and the projections' backward read that buffer: no residual kernel runs.
Op llm_c_residual(double hidden, double elt) {
  Op residual = make_memory("residual", 2 * 2 * hidden, elt, 0.0, /*kernels=*/0);
  residual.backward_factor = 0.0;
  return residual;
}

// The summed output widths of a layer's biased projections, and how many there are.
std::pair<double, double> biased_outputs(const ModelSpec& model, const Dims& x, double qkv_width) {
  double widths = 0.0, projections = 0.0;
  if (model.family != Family::kLlama) {
    const double mlp_inputs = model.arch.gated_ffn ? 2.0 : 1.0;
    widths = qkv_width + x.d + mlp_inputs * x.f + x.d;
    projections = 4.0;
  } else if (model.arch.qkv_bias) {
    widths = qkv_width;
    projections = 1.0;
  }
  return {widths, projections};
}

// The biases' gradients: Linear's backward sums the output's gradient over the tokens, one
// reduction kernel per biased projection (autograd's addmm backward, sum_to; llm.c's
// matmul_backward_bias) reading that gradient. The FlashAttention GPT's FusedDense computes it in
// the weight-gradient GEMM; Llama has no biases but Qwen2's on q, k and v.
void add_bias_gradients(std::vector<Op>& ops,
                        const ModelSpec& model,
                        const Dims& x,
                        double qkv_width) {
  if (x.flash_attn_gpt) return;
  const auto [widths, projections] = biased_outputs(model, x, qkv_width);
  if (projections == 0.0) return;
  if (x.impl.linear_bias_add) {
    // Each bias added in place after its product: a read and a write of the output.
    // Its gradient is the reduction below.
    ops.push_back(with_backward(
        make_memory("linear_bias_adds", 2.0 * x.n * widths, x.elt, 0.0, projections), 0.0, 0.0));
  }
  ops.push_back(with_backward(make_memory("bias_gradients", 0.0, x.elt, 0.0, /*kernels=*/0.0),
                              x.n * widths * x.elt,
                              projections));
}

// Tensors of one layer: 6 weights + 6 biases + 2 x LayerNorm(weight, bias); llama: 7 weights,
// Qwen2's 3 biases, 2 RMSNorm weights (none with OLMo's LayerNorm).
double layer_param_tensors(const ModelSpec& model) {
  const ArchSpec& a = model.arch;
  if (model.family != Family::kLlama) return 16;
  return 7 + (a.qkv_bias ? 3 : 0) + (a.parameter_free_layer_norm ? 0 : 2);
}

// torchtitan's per-op checkpointing policy (torchtitan/models/llama/parallelize_llama.py,
// _get_custom_policy, at 9dec370): a checkpointed layer counts its matmul calls (aten.mm) in
// order and keeps the outputs of the odd ones, and keeps the flash attention kernel's output and
// log-sum-exp; everything else is recomputed. One Op may stand for several calls of the model
// code (Meta's Llama code projects q, k and v, and the gate and up of SwiGLU, separately).
class AlternateMatmulPolicy {
 public:
  explicit AlternateMatmulPolicy(const Dims& x)
      : x_(x), on_(x.impl.checkpointing.keep_alternate_matmuls) {}
  // `call_widths`: the output width of each call the op stands for, in call order.
  void matmul(Op& op, std::initializer_list<double> call_widths) {
    if (!on_) return;
    double total = 0.0, kept = 0.0;
    for (double width : call_widths) {
      total += width;
      if (++calls_ % 2 == 1) kept += width;
    }
    op.policy_kept_bytes = x_.n * kept * x_.elt;
    op.policy_kept_share = kept / total;
  }
  void fused_attention(Op& op) {
    if (!on_ || op.cls != OpClass::kFusedAttention) return;
    op.policy_kept_bytes = x_.n * x_.q * x_.elt + x_.b * x_.h * x_.t * kFp32;  // out, lse
    op.policy_kept_share = 1.0;
  }

 private:
  const Dims& x_;
  bool on_;
  int calls_ = 0;
};

Block transformer_layer(const ModelSpec& model, const Dims& x, bool fused) {
  const bool causal = family_traits(model.family).objective == Objective::kCausalLm;
  const bool bert = x.impl.code == ModelCode::kHuggingFace && model.family == Family::kRoberta;
  Block block;
  block.name = "layer";
  block.count = model.arch.n_layers;
  block.input_bytes = x.n * x.d * x.elt;
  if (x.impl.returns_key_values && causal) block.returned_bytes = 2.0 * x.n * x.kv * x.elt;
  block.param_tensors = layer_param_tensors(model);
  std::vector<Op>& ops = block.ops;
  const double hidden = x.n * x.d;
  ops.push_back(make_norm("ln_attention", x, /*keeps_input=*/true));
  const bool separate_projections = x.impl.code == ModelCode::kLlamaReference;
  AlternateMatmulPolicy policy(x);
  const double qkv_width = x.q + 2 * x.kv;
  Op qkv = make_matmul("qkv", x.n, qkv_width, x.d, x.elt);
  qkv.saved_bytes = hidden * x.elt;
  if (separate_projections) {
    policy.matmul(qkv, {x.q, x.kv, x.kv});
  } else {
    policy.matmul(qkv, {qkv_width});
  }
  ops.push_back(qkv);
  if (bert && x.impl.fp32_residual_stream && x.elt < kFp32 && !x.impl.compiled) {
    // BERT projects q, k and v with three Linears, each casting the fp32 hidden state down (the
    // norm's op counts one); backward, their gradients cast up and the input's four gradients
    // (three projections and the residual) gathered in fp32.
    ops.push_back(
        with_backward(make_memory("qkv_casts", 2.0 * hidden, kFp32 + x.elt, 0.0, /*kernels=*/2),
                      hidden * (2.0 * (x.elt + kFp32) + 3.0 * 3.0 * kFp32),
                      5.0));
  }
  // The FlashAttention repository's MHA hands the packed projection to the flash kernel as it is
  // and the kernel writes [b, s, h, d]: both rearranges are views, and the output projection's
  // input is the output the kernel keeps (flash_attn/modules/mha.py, FlashSelfAttention). llm.c's
  // cuDNN attention likewise reads q, k and v from the packed (B, T, 3, NH, HS) projection by
  // strides and writes (B, T, NH, HS) for the projection: no permute or unpermute kernel runs
  // (train_gpt2.cu and cudnn_att.cpp under ENABLE_CUDNN, karpathy/llm.c at a0d5dbb).
  const bool packed_flash = fused && (x.flash_attn_gpt || x.impl.code == ModelCode::kLlmC);
  if (x.impl.code == ModelCode::kLlamaReference) {
    // q, k and v are views of their projections; the rotary product writes q and k anew.
  } else if (!packed_flash && !(x.impl.strided_heads && !fused)) {
    // The heads' copies; backward, one copy of each gradient back (or the cat of the three).
    ops.push_back(
        with_backward_passes(make_memory("split_heads", 2 * x.n * qkv_width, x.elt, 0.0, 3),
                             2.0,
                             x.n * qkv_width,
                             x.elt));
  }
  if (model.arch.rotary_pct > 0.0) add_rotary(ops, model, x);
  add_attention(ops, x, fused, causal, bert);
  policy.fused_attention(ops.back());
  if (!packed_flash) {
    // The context made contiguous; backward, one copy of its gradient into the products' layout.
    ops.push_back(with_backward_passes(
        make_memory("merge_heads", 2 * x.n * x.q, x.elt, 0.0), 2.0, x.n * x.q, x.elt));
  }
  Op dense = make_matmul("attention_out", x.n, x.d, x.q, x.elt);
  dense.saved_bytes = packed_flash ? 0.0 : hidden * x.elt;
  policy.matmul(dense, {x.d});
  ops.push_back(dense);
  const double dropout_saved = x.dropout > 0.0 ? hidden * kept_mask_bytes(x, x.elt) : 0.0;
  if (x.dropout > 0.0)
    ops.push_back(make_dropout("dropout", hidden, x, dropout_saved, hidden_dropout_fused(x)));
  // The MLP's LayerNorm keeps its input; with GPT-NeoX's parallel residual that input is the
  // block's input, already kept by the attention's LayerNorm (one tensor, saved twice).
  const bool shared_input = model.family == Family::kGptNeox && model.arch.use_parallel_residual;
  ops.push_back(make_norm("ln_mlp", x, /*keeps_input=*/!shared_input));
  // A gated MLP (SwiGLU) computes gate and up projections and keeps both for SiLU(gate) x up.
  const double mlp_inputs = model.arch.gated_ffn ? 2.0 : 1.0;
  Op fc1 = make_matmul("mlp_in", x.n, mlp_inputs * x.f, x.d, x.elt);
  fc1.saved_bytes = hidden * x.elt;
  if (model.arch.gated_ffn && separate_projections) {
    policy.matmul(fc1, {x.f, x.f});  // w1 (gate), w3 (up)
  } else {
    policy.matmul(fc1, {mlp_inputs * x.f});
  }
  ops.push_back(fc1);
  ops.push_back(make_activation(model, x));
  Op fc2 = make_matmul("mlp_out", x.n, x.d, x.f, x.elt);
  fc2.saved_bytes = x.n * x.f * x.elt;
  policy.matmul(fc2, {x.d});
  ops.push_back(fc2);
  if (x.dropout > 0.0)
    ops.push_back(make_dropout("dropout", hidden, x, dropout_saved, hidden_dropout_fused(x)));
  // (The FlashAttention GPT adds both branches inside its LayerNorm kernels, make_norm.)
  if (x.impl.code == ModelCode::kLlmC) {
    ops.push_back(llm_c_residual(hidden, x.elt));
  } else if (!x.flash_attn_gpt) {
    // Two adds; backward, an add's gradient passes through and one add gathers the residual's
    // two gradients (the skip's and the branch's) for each.
    if (x.impl.fp32_residual_stream && x.elt < kFp32 && !x.impl.compiled) {
      // The fp32 stream plus the half-precision branch, written in fp32; backward, the fp32
      // gather and the branch's gradient cast down.
      ops.push_back(
          with_backward(make_memory("residual", 2.0 * hidden, 2.0 * kFp32 + x.elt, 0.0, 2),
                        2.0 * hidden * (3.0 * kFp32 + kFp32 + x.elt),
                        4.0));
    } else {
      ops.push_back(with_backward(
          make_memory("residual", 6 * hidden, x.elt, 0.0, 2), 6 * hidden * x.elt, 2.0));
    }
  }
  add_bias_gradients(ops, model, x, qkv_width);
  return block;
}

// transformers' other heads return their logits in the compute dtype. Below fp32 they are the
// logits the cross entropy keeps (make_cross_entropy: the caller's, alive through its backward),
// so a loop that holds them adds nothing; in fp32 the loss keeps only its log-probabilities and
// the returned logits come on top, as the output (held) or at the forward's end (dropped).
// GPT-style causal heads also shift them into a contiguous copy, alive as the loss's forward ends.
void add_returned_logits(Workload& w, const ModelSpec& model, const Dims& x, double logits) {
  const bool kept_by_loss = x.elt < 4.0;
  const bool causal = family_traits(model.family).objective == Objective::kCausalLm;
  w.head_output_bytes = kept_by_loss ? 0.0 : x.elt * logits;
  w.head_forward_extra_bytes = (causal ? x.elt * logits : 0.0) +
                               (kept_by_loss || x.impl.holds_output ? 0.0 : x.elt * logits);
}

void add_head(Workload& w, const ModelSpec& model, const Dims& x) {
  const double hidden = x.n * x.d;
  const auto& a = model.arch;
  if (model.family == Family::kVit) {
    w.head_ops.push_back(make_memory("final_ln", 2 * hidden, x.elt, hidden * x.elt));
    Op classifier = make_matmul("classifier", x.b, a.num_labels, x.d, x.elt);
    classifier.saved_bytes = x.b * x.d * x.elt;
    w.head_ops.push_back(classifier);
    w.head_ops.push_back(make_cross_entropy(x.b, a.num_labels, x.elt));
    return;
  }
  // The rows the vocabulary projection and loss run on: every position, or (an MLM head on the
  // masked positions only) the gathered ones.
  double rows = x.n;
  if (model.family == Family::kRoberta) {
    const int64_t masked = x.impl.mlm_predictions;
    if (masked > 0 && static_cast<double>(masked) < x.t) {
      rows = x.b * static_cast<double>(masked);
      w.head_ops.push_back(make_memory("mlm_gather", 2 * rows * x.d, x.elt, 0.0));
    }
    const double head = rows * x.d;
    Op dense = make_matmul("lm_head_dense", rows, x.d, x.d, x.elt);
    dense.saved_bytes = head * x.elt;
    w.head_ops.push_back(dense);
    w.head_ops.push_back(make_memory("lm_head_gelu_ln", 4 * head, x.elt, 2 * head * x.elt, 2));
  } else {
    w.head_ops.push_back(make_norm("final_ln", x, /*keeps_input=*/true));
  }
  Op unembed = make_matmul("unembed", rows, a.vocab_size, x.d, x.elt);
  unembed.saved_bytes = rows * x.d * x.elt;
  w.head_ops.push_back(unembed);
  if (x.impl.code == ModelCode::kLlmC) {
    // llm.c's fused classifier: reads each row of logits twice (the softmax statistics, then the
    // loss and gradient) and overwrites it with its gradient, in the forward pass; nothing in fp32
    // is kept and the backward has nothing left to do.
    const double logits = rows * a.vocab_size;
    Op classifier = make_memory("fused_classifier", 3.0 * logits, x.elt, logits * x.elt);
    classifier.backward_factor = 0.0;
    w.head_ops.push_back(classifier);
    return;
  }
  if (x.impl.code == ModelCode::kFlashAttn) {
    // The FlashAttention repository's training loss (training/configs/experiment/{pile,owt}/
    // base.yaml: CrossEntropyLossApex, inplace_backward "to save memory"): one pass for the rows'
    // fp32 statistics and the loss, and a backward that writes the logits' gradient over the
    // logits: only the logits are kept, nothing in fp32 and no second buffer.
    w.head_ops.push_back(make_inplace_cross_entropy(rows, a.vocab_size, x.elt));
    return;
  }
  const double logits = rows * static_cast<double>(a.vocab_size);
  if (x.impl.code == ModelCode::kHuggingFace && model.family == Family::kLlama && x.elt < 4.0) {
    // The returned logits are the fp32 copy; as the loss's forward ends the log-probabilities
    // and the shifted copy are alive beside it (the copy counted in the output where a loop
    // holds it).
    w.head_ops.push_back(make_upcast_cross_entropy(rows, a.vocab_size, x.elt));
    w.head_output_bytes = 4.0 * logits;
    w.head_forward_extra_bytes = (x.impl.holds_output ? 4.0 : 8.0) * logits;
    return;
  }
  w.head_ops.push_back(make_cross_entropy(rows, a.vocab_size, x.elt));
  if (x.impl.code == ModelCode::kHuggingFace) add_returned_logits(w, model, x, logits);
}

void add_stem(Workload& w, const ModelSpec& model, const Dims& x) {
  const double hidden = x.n * x.d;
  const auto& a = model.arch;
  if (model.family == Family::kVit) {
    const double patches = x.b * (x.t - 1);
    Op patchify = make_matmul(
        "patch_embed", patches, x.d, a.num_channels * a.patch_size * a.patch_size, x.elt);
    patchify.saved_bytes = patches * a.num_channels * a.patch_size * a.patch_size * x.elt;
    w.stem_ops.push_back(patchify);
    w.stem_ops.push_back(make_memory("add_positions", 3 * hidden, x.elt, 0.0, 2));
  } else {
    w.stem_ops.push_back(make_memory("embed", 2 * hidden, x.elt, 0.0));
    if (model.family == Family::kGptNeox && a.learned_position_embeddings) {
      // GPT-2's learned position table, looked up and added to the token embeddings.
      w.stem_ops.push_back(make_memory("add_positions", 3 * hidden, x.elt, 0.0, 2));
    }
    if (model.family == Family::kRoberta) {
      w.stem_ops.push_back(make_memory("embed_ln", 6 * hidden, x.elt, hidden * x.elt, 3));
    }
  }
  if (x.dropout > 0.0) {
    w.stem_ops.push_back(make_dropout(
        "embed_dropout", hidden, x, hidden * kept_mask_bytes(x, x.elt), hidden_dropout_fused(x)));
  }
}

// llm.c fuses its pointwise chains by hand, to the effect of a compiler.
Implementation hand_fused(Implementation impl) {
  if (impl.code == ModelCode::kLlmC) impl.compiled = true;
  return impl;
}

// Compiled, every memory-bound operation (already counted at its fused traffic) is one generated
// kernel: TorchInductor emits one kernel per fused group of pointwise and reduction operations.
void fuse_launches(Workload& w) {
  auto fuse = [](std::vector<Op>& ops) {
    for (Op& op : ops) {
      if (op.cls != OpClass::kMemory) continue;
      op.kernels = std::min(op.kernels, 1.0);
      if (op.backward_kernels >= 0.0) op.backward_kernels = std::min(op.backward_kernels, 1.0);
    }
  };
  fuse(w.stem_ops);
  fuse(w.head_ops);
  for (Block& b : w.blocks) fuse(b.ops);
}

}  // namespace

Workload build_transformer_workload(const ModelSpec& model, const WorkloadOptions& options) {
  const auto& a = model.arch;
  const double b = static_cast<double>(options.micro_batch_size);
  const double t = static_cast<double>(a.seq_len);
  const double head_dim = static_cast<double>(a.attention_head_dim());
  const double kv_heads = static_cast<double>(a.key_value_heads());
  const Dims x{
      b,
      t,
      b * t,
      static_cast<double>(a.d_model),
      static_cast<double>(a.d_ffn),
      static_cast<double>(a.n_heads),
      head_dim,
      options.activation_bytes,
      model.recipe.dropout,
      kv_heads * head_dim,
      static_cast<double>(a.n_heads) * head_dim,
      model.family == Family::kLlama && !a.parameter_free_layer_norm,
      hand_fused(options.implementation),
      options.implementation.code == ModelCode::kFlashAttn && model.family == Family::kGptNeox,
      options.device_kind == DeviceKind::kCpu};
  Workload w;
  w.samples = options.micro_batch_size;
  w.tokens_per_sample = a.seq_len;
  add_stem(w, model, x);
  w.blocks.push_back(transformer_layer(model, x, options.fused_attention));
  w.blocks.back().params = count_params(model).largest_block;
  add_head(w, model, x);
  w.param_tensors = a.n_layers * w.blocks.back().param_tensors + 6;
  if (x.impl.compiled) fuse_launches(w);
  return w;
}

}  // namespace gpudays
