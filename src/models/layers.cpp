// Linear, LayerNorm, RmsNorm, Embedding and Conv with HuggingFace initialisation, on any device
// (meta too).
#include "models/layers.h"

#include <ATen/ops/conv1d.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/rsqrt.h>

namespace gpudays::models {

LinearImpl::LinearImpl(int64_t in_features,
                       int64_t out_features,
                       bool bias,
                       const at::TensorOptions& options,
                       double init_std) {
  weight_ = register_parameter(
      "weight", at::empty({out_features, in_features}, options).normal_(0, init_std));
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

at::ScalarType at_least_fp32(at::ScalarType type) {
  return c10::isReducedFloatingType(type) ? at::kFloat : type;
}

RmsNormImpl::RmsNormImpl(int64_t dim, double eps, const at::TensorOptions& options) : eps_(eps) {
  weight_ = register_parameter("weight", at::empty({dim}, options).fill_(1));
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor wide = x.to(at_least_fp32(x.scalar_type()));
  const at::Tensor variance = wide.pow(2).mean(/*dim=*/-1, /*keepdim=*/true);
  return weight * (wide * at::rsqrt(variance + eps)).to(x.scalar_type());
}

at::Tensor RmsNormImpl::forward(const at::Tensor& x) {
  return rms_norm(x, weight_, eps_);
}

EmbeddingImpl::EmbeddingImpl(int64_t count,
                             int64_t dim,
                             const at::TensorOptions& options,
                             int64_t padding_idx,
                             double init_std)
    : padding_idx_(padding_idx) {
  at::Tensor weight = at::empty({count, dim}, options).normal_(0, init_std);
  if (padding_idx >= 0) weight[padding_idx].zero_();
  weight_ = register_parameter("weight", weight);
}

at::Tensor EmbeddingImpl::forward(const at::Tensor& ids) {
  return at::embedding(weight_, ids, padding_idx_);
}

ConvImpl::ConvImpl(int64_t spatial_dims, const ConvOptions& conv, const at::TensorOptions& options)
    : spatial_dims_(spatial_dims), conv_(conv) {
  TORCH_CHECK(spatial_dims == 1 || spatial_dims == 2, "Conv: 1 or 2 spatial dimensions");
  std::vector<int64_t> shape = {conv.out_channels, conv.in_channels / conv.groups};
  shape.insert(shape.end(), spatial_dims, conv.kernel_size);
  weight_ = register_parameter("weight", at::empty(shape, options).normal_(0, conv.init_std));
  if (conv.bias)
    bias_ = register_parameter("bias", at::empty({conv.out_channels}, options).zero_());
}

at::Tensor ConvImpl::forward(const at::Tensor& x) {
  if (spatial_dims_ == 1) {
    return at::conv1d(x, weight_, bias_, conv_.stride, conv_.padding, /*dilation=*/1, conv_.groups);
  }
  return at::conv2d(x, weight_, bias_, conv_.stride, conv_.padding, /*dilation=*/1, conv_.groups);
}

std::shared_ptr<torch::nn::Module> add_group(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const at::Tensor& p : module.parameters()) total += p.numel();
  return total;
}

}  // namespace gpudays::models
