// ViT image classifier (HF ViTForImageClassification), single-device: patch embedding (Conv2d with
// kernel = stride = patch), class token, learned position embeddings, pre-LN encoder with exact
// GELU, final LayerNorm, classifier on the class token. Parameter names are HF checkpoint names.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "catalog/model_spec.h"
#include "models/attention.h"
#include "models/block_runner.h"
#include "models/layers.h"

namespace gpudays::models {

struct VitOptions {
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ffn = 0;
  int64_t image_size = 0;  // square images
  int64_t patch_size = 0;
  int64_t num_channels = 3;
  int64_t num_labels = 0;
  double layer_norm_eps = 1e-12;
  double hidden_dropout = 0.0;     // HF hidden_dropout_prob: embeddings, attention and MLP outputs
  double attention_dropout = 0.0;  // HF attention_probs_dropout_prob: attention probabilities
  double init_std = kInitStd;      // weights ~ N(0, init_std) (HF initializer_range)
  AttentionKind attention = AttentionKind::kPlain;
  at::TensorOptions param_options;  // device and dtype of the parameters (meta: no allocation)

  int64_t patches_per_side() const { return image_size / patch_size; }
  int64_t seq_len() const { return patches_per_side() * patches_per_side() + 1; }  // + class token
};

// The options of a catalog model (family vit; otherwise InputError naming the family). Hidden
// dropout is the recipe's; attention dropout is the catalog's attention_probs_dropout_prob, 0 by
// default as in the original ViT-L/16 configuration (google-research/vision_transformer,
// models_config.py: attention_dropout_rate 0.0).
VitOptions vit_options(const ModelSpec& spec, const at::TensorOptions& param_options);

// One pre-LN encoder layer (HF ViTLayer, checkpoint prefix vit.encoder.layer.N).
class VitLayerImpl : public torch::nn::Module {
 public:
  explicit VitLayerImpl(const VitOptions& options);
  at::Tensor forward(const at::Tensor& x);  // [B, T, D] -> [B, T, D]
  void set_attention(AttentionKind kind) { attention_ = kind; }

 private:
  at::Tensor self_attention(const at::Tensor& x);  // [B, T, D] -> [B, T, D], before output.dense

  int64_t n_heads_;
  double hidden_dropout_;
  double attention_dropout_;
  AttentionKind attention_;
  LayerNorm layernorm_before_{nullptr}, layernorm_after_{nullptr};
  Linear query_{nullptr}, key_{nullptr}, value_{nullptr}, attention_output_{nullptr};
  Linear intermediate_{nullptr}, output_{nullptr};
};
TORCH_MODULE(VitLayer);

// The trunk (HF ViTModel without pooler, prefix "vit"): embeddings, encoder, final LayerNorm.
class VitModelImpl : public torch::nn::Module {
 public:
  explicit VitModelImpl(const VitOptions& options);
  at::Tensor forward(const at::Tensor& images);  // images: [B, C, H, W] -> hidden: [B, T, D]
  void set_attention(AttentionKind kind);
  // The encoder layers are the blocks (vit.encoder.layer.N), in order.
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  BlockParameters block_parameters() const;

 private:
  at::Tensor embed(const at::Tensor& images);  // [B, C, H, W] -> [B, T, D]

  VitOptions options_;
  BlockRunner block_runner_;
  at::Tensor cls_token_;            // [1, 1, D]
  at::Tensor position_embeddings_;  // [1, T, D]
  Conv projection_{nullptr};        // [D, C, P, P]
  torch::nn::ModuleList layers_{nullptr};
  LayerNorm layernorm_{nullptr};
};
TORCH_MODULE(VitModel);

// The classifier (HF ViTForImageClassification): trunk and a linear head on the class token.
class VitForImageClassificationImpl : public torch::nn::Module {
 public:
  explicit VitForImageClassificationImpl(const VitOptions& options);
  at::Tensor forward(const at::Tensor& images);  // images: [B, C, H, W] float -> [B, num_labels]
  void set_attention(AttentionKind kind) { vit_->set_attention(kind); }
  void set_block_runner(BlockRunner runner) { vit_->set_block_runner(std::move(runner)); }
  BlockParameters block_parameters() const { return vit_->block_parameters(); }
  const VitOptions& options() const { return options_; }

 private:
  VitOptions options_;
  VitModel vit_{nullptr};
  Linear classifier_{nullptr};
};
TORCH_MODULE(VitForImageClassification);

}  // namespace gpudays::models
