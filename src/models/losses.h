// Training objectives shared by the model families, computed in at least fp32 as HuggingFace's
// loss functions do. Models return logits; the engine picks the loss.
#pragma once

#include <ATen/core/Tensor.h>

namespace gpudays::models {

// Mean next-token cross-entropy over B * (T - 1) positions (HF ForCausalLMLoss).
// logits: [B, T, V], tokens: [B, T] int64 -> scalar, fp32 (fp64 for fp64 logits)
at::Tensor causal_lm_loss(const at::Tensor& logits, const at::Tensor& tokens);

}  // namespace gpudays::models
