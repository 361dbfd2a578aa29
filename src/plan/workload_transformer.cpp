// Forward workload of the transformer families: gpt_neox (Pythia; parallel residual, rotary,
// causal), roberta (post-LN encoder, MLM head over every position) and vit (pre-LN encoder,
// patch embedding, classifier). Saved activations follow Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models", Section 4.1, per tensor and per dtype.
#include <algorithm>

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
};

void add_attention(std::vector<Op>& ops, const Dims& x, bool fused, bool causal) {
  const double scores = x.b * x.h * x.t * x.t;
  const double attn_flops = 4.0 * x.b * x.h * x.t * x.t * x.hd;  // QK^T and AV, non-causal count
  if (fused) {
    Op op;
    op.name = "fused_attention";
    op.cls = OpClass::kFusedAttention;
    op.model_flops = attn_flops;
    op.exec_flops = causal ? attn_flops / 2 : attn_flops;
    const double qkvo = 2.0 * x.n * x.d + 2.0 * x.n * x.kv;   // q and out, k and v
    op.bytes = qkvo * x.elt;                                  // read q, k, v; write out
    op.saved_bytes = qkvo * x.elt + x.b * x.h * x.t * kFp32;  // q, k, v, out, lse
    op.backward_factor = 2.5;                                 // FlashAttention-2, Sec. 3
    op.m = x.t;
    op.n = x.t;
    op.k = x.hd;
    ops.push_back(op);
    return;
  }
  Op qk = make_matmul("attention_qk", x.t, x.t, x.hd, x.elt, x.b * x.h);
  qk.saved_bytes = (x.n * x.d + x.n * x.kv) * x.elt;  // q, k
  ops.push_back(qk);
  // Scale, mask and softmax in fp32 (autocast's fp32 list), cast back for the AV matmul.
  const double softmax_saved = x.elt < kFp32 ? scores * (kFp32 + x.elt) : scores * kFp32;
  Op softmax = make_memory("softmax", scores * 4.0, kFp32, softmax_saved, /*kernels=*/3);
  softmax.transient_bytes = scores * kFp32 * 2.0;
  ops.push_back(softmax);
  if (x.dropout > 0.0) {
    ops.push_back(
        make_memory("attention_dropout", scores * 2.0, x.elt, scores * (kMaskBytes + x.elt)));
  }
  Op av = make_matmul("attention_av", x.t, x.hd, x.t, x.elt, x.b * x.h);
  av.saved_bytes = x.n * x.kv * x.elt;  // v (probabilities counted above)
  ops.push_back(av);
}

Block transformer_layer(const ModelSpec& model, const Dims& x, bool fused) {
  const bool neox = model.family == Family::kGptNeox;
  Block block;
  block.name = "layer";
  block.count = model.arch.n_layers;
  block.input_bytes = x.n * x.d * x.elt;
  block.param_tensors = 16;  // 6 weights + 6 biases + 2 x LayerNorm(weight, bias)
  std::vector<Op>& ops = block.ops;
  const double hidden = x.n * x.d;
  ops.push_back(make_memory("ln_attention", 2 * hidden, x.elt, hidden * x.elt));
  const double qkv_width = x.d + 2 * x.kv;
  Op qkv = make_matmul("qkv", x.n, qkv_width, x.d, x.elt);
  qkv.saved_bytes = hidden * x.elt;
  ops.push_back(qkv);
  ops.push_back(make_memory("split_heads", 2 * x.n * qkv_width, x.elt, 0.0, 3));
  if (neox) {
    ops.push_back(make_memory("rotary", 2 * 2 * hidden * model.arch.rotary_pct * 2, x.elt, 0, 4));
  }
  add_attention(ops, x, fused, /*causal=*/neox);
  ops.push_back(make_memory("merge_heads", 2 * hidden, x.elt, 0.0));
  Op dense = make_matmul("attention_out", x.n, x.d, x.d, x.elt);
  dense.saved_bytes = hidden * x.elt;
  ops.push_back(dense);
  const double dropout_saved = x.dropout > 0.0 ? hidden * kMaskBytes : 0.0;
  if (x.dropout > 0.0) ops.push_back(make_memory("dropout", 2 * hidden, x.elt, dropout_saved));
  // The MLP's LayerNorm keeps its input; with GPT-NeoX's parallel residual that input is the
  // block's input, already kept by the attention's LayerNorm (one tensor, saved twice).
  const bool shared_input = neox && model.arch.use_parallel_residual;
  ops.push_back(make_memory("ln_mlp", 2 * hidden, x.elt, shared_input ? 0.0 : hidden * x.elt));
  // A gated MLP (SwiGLU) computes gate and up projections and keeps both for SiLU(gate) x up.
  const double mlp_inputs = model.arch.gated_ffn ? 2.0 : 1.0;
  Op fc1 = make_matmul("mlp_in", x.n, mlp_inputs * x.f, x.d, x.elt);
  fc1.saved_bytes = hidden * x.elt;
  ops.push_back(fc1);
  ops.push_back(make_memory(model.arch.gated_ffn ? "silu_mul" : "gelu",
                            (mlp_inputs + 1) * x.n * x.f,
                            x.elt,
                            mlp_inputs * x.n * x.f * x.elt));
  Op fc2 = make_matmul("mlp_out", x.n, x.d, x.f, x.elt);
  fc2.saved_bytes = x.n * x.f * x.elt;
  ops.push_back(fc2);
  if (x.dropout > 0.0) ops.push_back(make_memory("dropout", 2 * hidden, x.elt, dropout_saved));
  ops.push_back(make_memory("residual", 6 * hidden, x.elt, 0.0, 2));
  return block;
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
  if (model.family == Family::kRoberta) {
    Op dense = make_matmul("lm_head_dense", x.n, x.d, x.d, x.elt);
    dense.saved_bytes = hidden * x.elt;
    w.head_ops.push_back(dense);
    w.head_ops.push_back(make_memory("lm_head_gelu_ln", 4 * hidden, x.elt, 2 * hidden * x.elt, 2));
  } else {
    w.head_ops.push_back(make_memory("final_ln", 2 * hidden, x.elt, hidden * x.elt));
  }
  Op unembed = make_matmul("unembed", x.n, a.vocab_size, x.d, x.elt);
  unembed.saved_bytes = hidden * x.elt;
  w.head_ops.push_back(unembed);
  w.head_ops.push_back(make_cross_entropy(x.n, a.vocab_size, x.elt));
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
    if (model.family == Family::kRoberta) {
      w.stem_ops.push_back(make_memory("embed_ln", 6 * hidden, x.elt, hidden * x.elt, 3));
    }
  }
  if (x.dropout > 0.0) {
    w.stem_ops.push_back(make_memory("embed_dropout", 2 * hidden, x.elt, hidden * kMaskBytes));
  }
}

}  // namespace

Workload build_transformer_workload(const ModelSpec& model, const WorkloadOptions& options) {
  const auto& a = model.arch;
  const double b = static_cast<double>(options.micro_batch_size);
  const double t = static_cast<double>(a.seq_len);
  const double head_dim = static_cast<double>(a.d_model / a.n_heads);
  const double kv_heads = static_cast<double>(a.n_kv_heads > 0 ? a.n_kv_heads : a.n_heads);
  const Dims x{b,
               t,
               b * t,
               static_cast<double>(a.d_model),
               static_cast<double>(a.d_ffn),
               static_cast<double>(a.n_heads),
               head_dim,
               options.activation_bytes,
               model.recipe.dropout,
               kv_heads * head_dim};
  Workload w;
  w.samples = options.micro_batch_size;
  w.tokens_per_sample = a.seq_len;
  add_stem(w, model, x);
  w.blocks.push_back(transformer_layer(model, x, options.fused_attention));
  w.blocks.back().params = count_params(model).largest_block;
  add_head(w, model, x);
  w.param_tensors = a.n_layers * w.blocks.back().param_tensors + 6;
  return w;
}

}  // namespace gpudays
