// Parameter-holding building blocks (Linear, LayerNorm, Embedding) that create their weights with
// the given TensorOptions, so a full-size model can be built on the meta device without allocating
// memory. Initialisation follows HuggingFace's _init_weights; the maths is plain ATen.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace gpudays::models {

// HuggingFace's `initializer_range` default (0.02), used by every reference configuration.
inline constexpr double kInitStd = 0.02;

// y = x W^T + b. Weight ~ N(0, kInitStd), bias 0.
class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias, const at::TensorOptions& options);
  at::Tensor forward(const at::Tensor& x);  // x: [..., in] -> [..., out]
  const at::Tensor& weight() const { return weight_; }  // [out, in]
  const at::Tensor& bias() const { return bias_; }      // [out], undefined without bias

 private:
  at::Tensor weight_;
  at::Tensor bias_;
};
TORCH_MODULE(Linear);

// LayerNorm over the last dimension with an affine weight (1) and bias (0).
class LayerNormImpl : public torch::nn::Module {
 public:
  LayerNormImpl(int64_t dim, double eps, const at::TensorOptions& options);
  at::Tensor forward(const at::Tensor& x);  // x: [..., dim] -> [..., dim]

 private:
  int64_t dim_;
  double eps_;
  at::Tensor weight_;
  at::Tensor bias_;
};
TORCH_MODULE(LayerNorm);

// Token table. Weight ~ N(0, kInitStd).
class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t count, int64_t dim, const at::TensorOptions& options);
  at::Tensor forward(const at::Tensor& ids);  // ids: [...] int64 -> [..., dim]
  const at::Tensor& weight() const { return weight_; }  // [count, dim]

 private:
  at::Tensor weight_;
};
TORCH_MODULE(Embedding);

// Parameters of `module`, counted without touching their data (works on the meta device).
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace gpudays::models
