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
#include <optional>

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

// k or v: [B, Hkv, T, D] -> [B, Hkv * groups, T, D], each head repeated for its `groups`
// consecutive query heads (transformers' repeat_kv: expand, then one copy).
at::Tensor repeat_kv(const at::Tensor& x, int64_t groups) {
  if (groups == 1) return x;
  const int64_t b = x.size(0), heads = x.size(1), t = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({b, heads, groups, t, d}).reshape({b, heads * groups, t, d});
}

// Whether a fused kernel of torch 2.11 takes grouped keys and values as they are (enable_gqa):
// on the CPU its flash kernel does, in every dtype; on CUDA only the flash kernel (fp16/bf16, head
// dims up to 256) and cuDNN's do. The memory-efficient kernel, CUDA's only fused one in fp32 or
// above 256, needs equal head counts, so enable_gqa would send those cases to the math kernel
// (quadratic memory); they take repeated heads instead. (torch's functional.py documents GQA for
// the flash and math kernels on CUDA; its CPU flash kernel takes it, tests/models show it.)
bool fused_takes_grouped_kv(const at::Tensor& q) {
  if (q.device().is_cpu()) return true;
  const bool half = q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16;
  return q.is_cuda() && half && q.size(-1) <= 256;
}

at::Tensor attend_plain(const at::Tensor& q,
                        const at::Tensor& k,
                        const at::Tensor& v,
                        const AttentionMask& mask,
                        double dropout_p) {
  const int64_t groups = q.size(1) / k.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  at::Tensor scores = at::matmul(q, repeat_kv(k, groups).transpose(-2, -1)) * scale;  // [B,H,Tq,Tk]
  const at::Tensor keep = allowed(mask, q.size(-2), k.size(-2), q.device());
  if (keep.defined()) {
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity());
  }
  // Softmax in at least fp32 (HF upcasts half precision; fp64 stays fp64 for gradient checks).
  const at::ScalarType softmax_type = c10::promoteTypes(q.scalar_type(), at::kFloat);
  at::Tensor probs = at::softmax(scores, /*dim=*/-1, softmax_type).to(q.scalar_type());
  if (dropout_p > 0) probs = at::dropout(probs, dropout_p, /*train=*/true);
  return at::matmul(probs, repeat_kv(v, groups));
}

at::Tensor attend_fused(const at::Tensor& q,
                        const at::Tensor& k,
                        const at::Tensor& v,
                        const AttentionMask& mask,
                        double dropout_p) {
  const int64_t groups = q.size(1) / k.size(1);
  const bool grouped = groups > 1 && fused_takes_grouped_kv(q);
  const at::Tensor keys = grouped ? k : repeat_kv(k, groups);
  const at::Tensor values = grouped ? v : repeat_kv(v, groups);
  // A padding mask rules out is_causal (the kernels take one or the other): pass the full mask.
  const at::Tensor keep =
      mask.key_keep.defined() ? allowed(mask, q.size(-2), k.size(-2), q.device()) : at::Tensor();
  return at::scaled_dot_product_attention(
      q,
      keys,
      values,
      keep.defined() ? std::optional<at::Tensor>(keep) : std::nullopt,
      dropout_p,
      /*is_causal=*/mask.causal && !keep.defined(),
      /*scale=*/std::nullopt,
      /*enable_gqa=*/grouped);
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
