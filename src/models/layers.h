// Parameter-holding building blocks (Linear, LayerNorm, Embedding, Conv) that create their
// weights with the given TensorOptions, so a full-size model can be built on the meta device
// without allocating memory. Initialisation follows HuggingFace's _init_weights; maths is ATen.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <string>

namespace gpudays::models {

// HuggingFace's `initializer_range` default (0.02); models pass the catalog's value (ArchSpec).
inline constexpr double kInitStd = 0.02;

// y = x W^T + b. Weight ~ N(0, init_std), bias 0.
class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t in_features,
             int64_t out_features,
             bool bias,
             const at::TensorOptions& options,
             double init_std = kInitStd);
  at::Tensor forward(const at::Tensor& x);              // x: [..., in] -> [..., out]
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

// The dtype norms and losses compute in, as transformers' upcasts: fp32 for bf16 and fp16, other
// types unchanged (fp64 stays fp64, for gradient checks).
at::ScalarType at_least_fp32(at::ScalarType type);

// weight * x / sqrt(mean(x^2) + eps): the normalisation in >= fp32, cast back to x's dtype before
// the weight multiplies it (transformers' LlamaRMSNorm, MambaRMSNorm, T5LayerNorm).
// x: [..., D], weight: [D] -> [..., D]
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// rms_norm with its weight (starting at 1).
class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t dim, double eps, const at::TensorOptions& options);
  at::Tensor forward(const at::Tensor& x);  // x: [..., dim] -> [..., dim]
  const at::Tensor& weight() const { return weight_; }

 private:
  double eps_;
  at::Tensor weight_;
};
TORCH_MODULE(RmsNorm);

// Lookup table. Weight ~ N(0, init_std); with a padding_idx (>= 0) that row starts at zero and
// receives no gradient, as torch.nn.Embedding(padding_idx=...).
class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t count,
                int64_t dim,
                const at::TensorOptions& options,
                int64_t padding_idx = -1,
                double init_std = kInitStd);
  at::Tensor forward(const at::Tensor& ids);            // ids: [...] int64 -> [..., dim]
  const at::Tensor& weight() const { return weight_; }  // [count, dim]

 private:
  int64_t padding_idx_;
  at::Tensor weight_;
};
TORCH_MODULE(Embedding);

struct ConvOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t kernel_size = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t groups = 1;  // in_channels: depthwise
  bool bias = true;
  double init_std = kInitStd;  // weight ~ N(0, init_std)
};

// 1-d or 2-d convolution (weight [out, in / groups, k(, k)] ~ N(0, init_std), bias 0).
class ConvImpl : public torch::nn::Module {
 public:
  ConvImpl(int64_t spatial_dims, const ConvOptions& conv, const at::TensorOptions& options);
  // x: [B, in, L] or [B, in, H, W] -> [B, out, L'] or [B, out, H', W']
  at::Tensor forward(const at::Tensor& x);

 private:
  int64_t spatial_dims_;
  ConvOptions conv_;
  at::Tensor weight_;
  at::Tensor bias_;
};
TORCH_MODULE(Conv);

// An empty module registered as `name` under `parent`, only to nest parameter names as
// HuggingFace does (roberta.encoder.layer.0.attention.self.query) without a class per level.
std::shared_ptr<torch::nn::Module> add_group(torch::nn::Module& parent, const std::string& name);

// Parameters of `module`, counted without touching their data (works on the meta device).
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace gpudays::models
