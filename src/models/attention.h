// Scaled dot-product attention in two selectable implementations: plain (matmul, masked softmax in
// fp32, matmul: the obviously-correct reference) and fused (at::scaled_dot_product_attention, which
// picks a flash or memory-efficient kernel). Projections and head layout belong to the models.
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

// q: [B, H, Tq, D], k, v: [B, H, Tk, D] -> [B, H, Tq, D]. Scale 1/sqrt(D); dropout_p on the
// attention probabilities (pass 0 outside training).
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
