// Loss functions: shifted cross-entropy for causal LMs, masked-LM and classification cross-entropy.
#include "models/losses.h"

#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss.h>

namespace gpudays::models {
namespace {

at::Tensor at_least_fp32(const at::Tensor& t) {
  return t.to(c10::promoteTypes(t.scalar_type(), at::kFloat));  // fp64 stays fp64
}

}  // namespace

at::Tensor causal_lm_loss(const at::Tensor& logits, const at::Tensor& tokens) {
  const int64_t vocab = logits.size(-1);
  const int64_t steps = logits.size(1) - 1;
  const at::Tensor predicted = at_least_fp32(logits.narrow(1, 0, steps)).reshape({-1, vocab});
  const at::Tensor targets = tokens.narrow(1, 1, steps).reshape({-1});
  return at::cross_entropy_loss(predicted, targets, /*weight=*/{}, at::Reduction::Mean);
}

at::Tensor masked_lm_loss(const at::Tensor& logits, const at::Tensor& labels) {
  return at::cross_entropy_loss(at_least_fp32(logits).reshape({-1, logits.size(-1)}),
                                labels.reshape({-1}),
                                /*weight=*/{},
                                at::Reduction::Mean,
                                /*ignore_index=*/-100);
}

at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels) {
  return at::cross_entropy_loss(at_least_fp32(logits), labels, /*weight=*/{}, at::Reduction::Mean);
}

}  // namespace gpudays::models
