// Rotary position embeddings in HuggingFace's rotate-half convention (the "default" rope_type):
// tables of cos and sin per position, and their product with q or k. Shared by gpt_neox (which
// rotates part of each head) and llama (the whole head); which heads rotate is the model's choice.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace gpudays::models {

// cos, sin: [T, dims] in the dtype of the tensor they were made for.
struct RotaryTables {
  at::Tensor cos;
  at::Tensor sin;
};

// Tables for positions 0..T-1: inverse frequencies 1 / base^(2i / dims) in fp32 (as transformers
// computes them), angles [T, dims / 2] repeated to [T, dims], cast to `like`'s dtype and device.
RotaryTables rotary_tables(int64_t dims, double base, int64_t seq_len, const at::Tensor& like);

// x: [B, H, T, head_dim] -> [B, H, T, head_dim]: x * cos + rotate_half(x) * sin on the first
// `dims` channels (the tables' width), the rest passed through. The tables take x's dtype (as
// transformers'): under autocast q and k are bf16/fp16 and fp32 tables would promote them, and
// everything after them, to fp32.
at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& rotary);

}  // namespace gpudays::models
