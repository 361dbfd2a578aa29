// Linear, LayerNorm and Embedding with HuggingFace initialisation, created on any device (meta too).
#include "models/layers.h"

#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>

namespace gpudays::models {

LinearImpl::LinearImpl(int64_t in_features,
                       int64_t out_features,
                       bool bias,
                       const at::TensorOptions& options) {
  weight_ = register_parameter("weight",
                               at::empty({out_features, in_features}, options).normal_(0, kInitStd));
  if (bias) bias_ = register_parameter("bias", at::empty({out_features}, options).zero_());
}

at::Tensor LinearImpl::forward(const at::Tensor& x) {
  return at::linear(x, weight_, bias_);
}

LayerNormImpl::LayerNormImpl(int64_t dim, double eps, const at::TensorOptions& options)
    : dim_(dim), eps_(eps) {
  weight_ = register_parameter("weight", at::empty({dim}, options).fill_(1));
  bias_ = register_parameter("bias", at::empty({dim}, options).zero_());
}

at::Tensor LayerNormImpl::forward(const at::Tensor& x) {
  return at::layer_norm(x, {dim_}, weight_, bias_, eps_);
}

EmbeddingImpl::EmbeddingImpl(int64_t count, int64_t dim, const at::TensorOptions& options) {
  weight_ = register_parameter("weight", at::empty({count, dim}, options).normal_(0, kInitStd));
}

at::Tensor EmbeddingImpl::forward(const at::Tensor& ids) {
  return at::embedding(weight_, ids);
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const at::Tensor& p : module.parameters()) total += p.numel();
  return total;
}

}  // namespace gpudays::models
