// Plain and fused attention; the plain path mirrors HuggingFace's eager_attention_forward.
#include "models/attention.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/softmax.h>

#include <cmath>
#include <limits>

#include "common/error.h"

namespace gpudays::models {
namespace {

// [B or 1, 1, Tq or 1, Tk] bool, true where attention is allowed; undefined when nothing is masked.
at::Tensor allowed(const AttentionMask& mask, int64_t tq, int64_t tk, const at::Device& device) {
  at::Tensor keep;
  if (mask.causal) {
    keep = at::ones({tq, tk}, at::TensorOptions().dtype(at::kBool).device(device)).tril();
    keep = keep.view({1, 1, tq, tk});
  }
  if (mask.key_keep.defined()) {
    const at::Tensor keys = mask.key_keep.to(at::kBool).view({mask.key_keep.size(0), 1, 1, tk});
    keep = keep.defined() ? keep.logical_and(keys) : keys;
  }
  return keep;
}

at::Tensor attend_plain(const at::Tensor& q,
                        const at::Tensor& k,
                        const at::Tensor& v,
                        const AttentionMask& mask,
                        double dropout_p) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;  // [B, H, Tq, Tk]
  const at::Tensor keep = allowed(mask, q.size(-2), k.size(-2), q.device());
  if (keep.defined()) {
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity());
  }
  // Softmax in at least fp32 (HF upcasts half precision; fp64 stays fp64 for gradient checks).
  const at::ScalarType softmax_type = c10::promoteTypes(q.scalar_type(), at::kFloat);
  at::Tensor probs = at::softmax(scores, /*dim=*/-1, softmax_type).to(q.scalar_type());
  if (dropout_p > 0) probs = at::dropout(probs, dropout_p, /*train=*/true);
  return at::matmul(probs, v);
}

at::Tensor attend_fused(const at::Tensor& q,
                        const at::Tensor& k,
                        const at::Tensor& v,
                        const AttentionMask& mask,
                        double dropout_p) {
  if (!mask.key_keep.defined()) {
    return at::scaled_dot_product_attention(q,
                                            k,
                                            v,
                                            /*attn_mask=*/{},
                                            dropout_p,
                                            /*is_causal=*/mask.causal);
  }
  // A padding mask rules out is_causal (the kernels take one or the other): pass the full mask.
  const at::Tensor keep = allowed(mask, q.size(-2), k.size(-2), q.device());
  return at::scaled_dot_product_attention(q, k, v, keep, dropout_p, /*is_causal=*/false);
}

}  // namespace

std::string to_string(AttentionKind kind) {
  return kind == AttentionKind::kPlain ? "plain" : "fused";
}

AttentionKind parse_attention_kind(const std::string& text) {
  if (text == "plain") return AttentionKind::kPlain;
  if (text == "fused") return AttentionKind::kFused;
  throw InputError("unknown attention implementation '" + text +
                   "' (valid: " + join_choices({"plain", "fused"}) + ")");
}

at::Tensor attend(const at::Tensor& q,
                  const at::Tensor& k,
                  const at::Tensor& v,
                  const AttentionMask& mask,
                  AttentionKind kind,
                  double dropout_p) {
  return kind == AttentionKind::kPlain ? attend_plain(q, k, v, mask, dropout_p)
                                       : attend_fused(q, k, v, mask, dropout_p);
}

at::Tensor split_heads(const at::Tensor& x, int64_t n_heads) {
  return x.view({x.size(0), x.size(1), n_heads, x.size(2) / n_heads}).transpose(1, 2);
}

at::Tensor merge_heads(const at::Tensor& x) {
  return x.transpose(1, 2).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

}  // namespace gpudays::models
