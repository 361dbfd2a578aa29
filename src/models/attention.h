// Scaled dot-product attention in two selectable implementations: plain (matmul, masked softmax in
// fp32, matmul: the obviously-correct reference) and fused (at::scaled_dot_product_attention, which
// picks a flash or memory-efficient kernel). Projections and head layout belong to the models.
// Grouped-query attention (fewer key/value heads than query heads, llama) is handled here, once:
// the plain path repeats each key/value head for its group of query heads (transformers'
// repeat_kv, as its eager path), the fused one passes the groups to the kernel (enable_gqa)
// wherever a fused kernel of torch 2.11 takes them and repeats them like the plain path otherwise
// (attention.cpp, fused_takes_grouped_kv; docs/models.md, "Grouped-query attention").
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace gpudays::models {

enum class AttentionKind { kPlain, kFused };

std::string to_string(AttentionKind kind);
AttentionKind parse_attention_kind(const std::string& text);  // throws InputError naming choices

struct AttentionMask {
  bool causal = false;  // query i attends to keys 0..i (top-left aligned, as sdpa)
  at::Tensor key_keep;  // [B, Tk] bool, true where a key may be attended to; undefined: all
};

// q: [B, H, Tq, D], k, v: [B, Hkv, Tk, D] -> [B, H, Tq, D], Hkv dividing H: query head h
// attends with key/value head h / (H / Hkv). Scale 1/sqrt(D); dropout_p on the attention
// probabilities (pass 0 outside training).
at::Tensor attend(const at::Tensor& q,
                  const at::Tensor& k,
                  const at::Tensor& v,
                  const AttentionMask& mask,
                  AttentionKind kind,
                  double dropout_p = 0.0);

// x: [B, T, H * D] -> [B, H, T, D], and back.
at::Tensor split_heads(const at::Tensor& x, int64_t n_heads);
at::Tensor merge_heads(const at::Tensor& x);

}  // namespace gpudays::models
