// Training objectives of the model families, computed in at least fp32 as HuggingFace's
// loss functions do. Models return logits; the engine picks the loss.
#pragma once

#include <ATen/core/Tensor.h>

namespace gpudays::models {

// Mean next-token cross-entropy over B * (T - 1) positions (HF ForCausalLMLoss).
// logits: [B, T, V], tokens: [B, T] int64 -> scalar, fp32 (fp64 for fp64 logits)
at::Tensor causal_lm_loss(const at::Tensor& logits, const at::Tensor& tokens);

// Mean cross-entropy over the positions whose label is not -100 (HF masked LM loss).
// logits: [B, T, V], labels: [B, T] int64 (-100: ignored) -> scalar
at::Tensor masked_lm_loss(const at::Tensor& logits, const at::Tensor& labels);

// Mean cross-entropy of single-label classification (HF ForImageClassification, num_labels > 1).
// logits: [B, C], labels: [B] int64 -> scalar
at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels);

}  // namespace gpudays::models
