// ConvNeXt image classifier (HF ConvNextForImageClassification), single-device: 4x4 stride-4 stem
// with a channels-first LayerNorm, stages of blocks (7x7 depthwise conv, LayerNorm, 4x inverted
// MLP with exact GELU, layer scale, residual, optional drop path), LayerNorm + 2x2 stride-2 conv
// between stages, global average pool, final LayerNorm, classifier. HF checkpoint names.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "catalog/model_spec.h"
#include "models/block_runner.h"
#include "models/layers.h"

namespace gpudays::models {

// Constants of every ConvNeXt in the catalog that the catalog has no field for (the layer scale
// is one, with this default); values are transformers' ConvNextConfig defaults and
// modeling_convnext.py's hard-coded ones.
inline constexpr int64_t kConvnextPatchSize = 4;       // stem kernel and stride (config patch_size)
inline constexpr int64_t kConvnextKernelSize = 7;      // depthwise kernel of each block
inline constexpr double kConvnextInnerNormEps = 1e-6;  // stem, block and downsampling LayerNorms
inline constexpr double kConvnextLayerScaleInit = 1e-6;  // config layer_scale_init_value

struct ConvnextOptions {
  std::vector<int64_t> depths;        // blocks per stage
  std::vector<int64_t> hidden_sizes;  // channels per stage
  int64_t image_size = 0;             // square images
  int64_t num_channels = 3;
  int64_t num_labels = 0;
  double layer_norm_eps = 1e-12;  // the final LayerNorm only (HF config layer_norm_eps)
  double layer_scale_init = kConvnextLayerScaleInit;
  double drop_path_rate = 0.0;      // stochastic depth, rising linearly to this over all blocks
  double init_std = kInitStd;       // weights ~ N(0, init_std) (HF initializer_range)
  at::TensorOptions param_options;  // device and dtype of the parameters (meta: no allocation)
};

// The options of a catalog model (family convnext; otherwise InputError naming the family).
ConvnextOptions convnext_options(const ModelSpec& spec, const at::TensorOptions& param_options);

// One block (HF ConvNextLayer, prefix convnext.encoder.stages.N.layers.M).
class ConvnextLayerImpl : public torch::nn::Module {
 public:
  ConvnextLayerImpl(int64_t dim, double drop_path, const ConvnextOptions& options);
  at::Tensor forward(const at::Tensor& x);  // [B, C, H, W] -> [B, C, H, W]

 private:
  double drop_path_;
  Conv dwconv_{nullptr};
  LayerNorm layernorm_{nullptr};
  Linear pwconv1_{nullptr}, pwconv2_{nullptr};
  at::Tensor layer_scale_;  // [C], HF layer_scale_parameter
};
TORCH_MODULE(ConvnextLayer);

// A stage (HF ConvNextStage): downsampling (LayerNorm + 2x2 stride-2 conv) unless it is the first,
// then its blocks, which go through `runner` numbered from `first_block` (the downsampling layer
// is not a block).
class ConvnextStageImpl : public torch::nn::Module {
 public:
  ConvnextStageImpl(int64_t stage,
                    const std::vector<double>& drop_paths,
                    const ConvnextOptions& options);
  // [B, C_in, H, W] -> [B, C_out, H', W']
  at::Tensor forward(const at::Tensor& x, const BlockRunner& runner = {}, int64_t first_block = 0);
  int64_t block_count() const { return static_cast<int64_t>(layers_->size()); }
  void append_block_parameters(BlockParameters& blocks) const;

 private:
  LayerNorm downsample_norm_{nullptr};  // absent in stage 0
  Conv downsample_conv_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
};
TORCH_MODULE(ConvnextStage);

// The classifier (HF ConvNextForImageClassification: trunk "convnext" and "classifier").
class ConvnextForImageClassificationImpl : public torch::nn::Module {
 public:
  explicit ConvnextForImageClassificationImpl(const ConvnextOptions& options);
  at::Tensor forward(const at::Tensor& images);  // images: [B, C, H, W] float -> [B, num_labels]
  // The blocks of every stage, numbered globally (stage 0's first, then stage 1's, ...).
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  BlockParameters block_parameters() const;
  const ConvnextOptions& options() const { return options_; }

 private:
  ConvnextOptions options_;
  BlockRunner block_runner_;
  Conv stem_{nullptr};
  LayerNorm stem_norm_{nullptr};
  torch::nn::ModuleList stages_{nullptr};
  LayerNorm final_norm_{nullptr};
  Linear classifier_{nullptr};
};
TORCH_MODULE(ConvnextForImageClassification);

}  // namespace gpudays::models
