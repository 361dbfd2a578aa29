// Loss functions: shifted cross-entropy for causal language models.
#include "models/losses.h"

#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss.h>

namespace gpudays::models {

at::Tensor causal_lm_loss(const at::Tensor& logits, const at::Tensor& tokens) {
  const int64_t vocab = logits.size(-1);
  const int64_t steps = logits.size(1) - 1;
  const at::ScalarType type = c10::promoteTypes(logits.scalar_type(), at::kFloat);  // fp64 stays
  const at::Tensor predicted = logits.narrow(1, 0, steps).to(type).reshape({-1, vocab});
  const at::Tensor targets = tokens.narrow(1, 1, steps).reshape({-1});
  return at::cross_entropy_loss(predicted, targets, /*weight=*/{}, at::Reduction::Mean);
}

}  // namespace gpudays::models
