// ViT forward pass, following HuggingFace's modeling_vit: patches by a strided convolution, class
// token prepended, position embeddings added, pre-LN layers x + attn(ln(x)), x + mlp(ln(x)).
// transformers 5 renames the layers in memory (vit.layers.N.attention.q_proj, ...) but reads and
// writes checkpoints under the names used here (vit.encoder.layer.N.attention.attention.query,
// ...).
#include "models/vit.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays::models {

VitOptions vit_options(const ModelSpec& spec, const at::TensorOptions& param_options) {
  if (spec.family != Family::kVit) {
    throw InputError(
        fmt::format("model '{}' is a {} model, not vit", spec.name, to_string(spec.family)));
  }
  validate_model(spec);  // heads divide d_model, patches tile the image, ...
  const ArchSpec& a = spec.arch;
  VitOptions o;
  o.n_layers = a.n_layers;
  o.d_model = a.d_model;
  o.n_heads = a.n_heads;
  o.d_ffn = a.d_ffn;
  o.image_size = a.image_size;
  o.patch_size = a.patch_size;
  o.num_channels = a.num_channels;
  o.num_labels = a.num_labels;
  o.layer_norm_eps = a.layer_norm_eps;
  o.hidden_dropout = spec.recipe.dropout;
  o.attention_dropout = a.attention_probs_dropout_prob;
  o.init_std = a.initializer_range;
  o.param_options = param_options;
  return o;
}

VitLayerImpl::VitLayerImpl(const VitOptions& options)
    : n_heads_(options.n_heads),
      hidden_dropout_(options.hidden_dropout),
      attention_dropout_(options.attention_dropout),
      attention_(options.attention) {
  const int64_t d = options.d_model;
  const auto& p = options.param_options;
  // vit.encoder.layer.N.attention.{attention.{query,key,value}, output.dense}
  const auto attention = add_group(*this, "attention");
  const auto self = add_group(*attention, "attention");
  query_ = self->register_module("query", Linear(d, d, /*bias=*/true, p, options.init_std));
  key_ = self->register_module("key", Linear(d, d, /*bias=*/true, p, options.init_std));
  value_ = self->register_module("value", Linear(d, d, /*bias=*/true, p, options.init_std));
  attention_output_ =
      add_group(*attention, "output")
          ->register_module("dense", Linear(d, d, /*bias=*/true, p, options.init_std));
  // vit.encoder.layer.N.{intermediate.dense, output.dense, layernorm_before, layernorm_after}
  intermediate_ =
      add_group(*this, "intermediate")
          ->register_module("dense", Linear(d, options.d_ffn, /*bias=*/true, p, options.init_std));
  output_ =
      add_group(*this, "output")
          ->register_module("dense", Linear(options.d_ffn, d, /*bias=*/true, p, options.init_std));
  layernorm_before_ = register_module("layernorm_before", LayerNorm(d, options.layer_norm_eps, p));
  layernorm_after_ = register_module("layernorm_after", LayerNorm(d, options.layer_norm_eps, p));
}

at::Tensor VitLayerImpl::self_attention(const at::Tensor& x) {
  const at::Tensor q = split_heads(query_(x), n_heads_);  // [B, H, T, head_dim]
  const at::Tensor k = split_heads(key_(x), n_heads_);
  const at::Tensor v = split_heads(value_(x), n_heads_);
  const double dropout_p = is_training() ? attention_dropout_ : 0.0;
  return merge_heads(attend(q, k, v, AttentionMask{}, attention_, dropout_p));  // no mask
}

at::Tensor VitLayerImpl::forward(const at::Tensor& x) {
  const bool train = is_training();
  const at::Tensor attn = attention_output_(self_attention(layernorm_before_(x)));
  const at::Tensor h = at::dropout(attn, hidden_dropout_, train) + x;
  const at::Tensor mlp =
      output_(at::gelu(intermediate_(layernorm_after_(h)), /*approximate=*/"none"));
  return at::dropout(mlp, hidden_dropout_, train) + h;
}

VitModelImpl::VitModelImpl(const VitOptions& options) : options_(options) {
  const int64_t d = options.d_model;
  const auto& p = options.param_options;
  // HF draws both from a normal with std initializer_range truncated at +-2 (100 sigma): a normal.
  const auto embeddings = add_group(*this, "embeddings");
  cls_token_ = embeddings->register_parameter("cls_token",
                                              at::empty({1, 1, d}, p).normal_(0, options.init_std));
  position_embeddings_ = embeddings->register_parameter(
      "position_embeddings", at::empty({1, options.seq_len(), d}, p).normal_(0, options.init_std));
  const ConvOptions patches{.in_channels = options.num_channels,
                            .out_channels = d,
                            .kernel_size = options.patch_size,
                            .stride = options.patch_size,
                            .init_std = options.init_std};
  projection_ = add_group(*embeddings, "patch_embeddings")
                    ->register_module("projection", Conv(/*spatial_dims=*/2, patches, p));
  layers_ = add_group(*this, "encoder")->register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.n_layers; ++i) layers_->push_back(VitLayer(options));
  layernorm_ = register_module("layernorm", LayerNorm(d, options.layer_norm_eps, p));
}

at::Tensor VitModelImpl::embed(const at::Tensor& images) {
  const int64_t side = options_.image_size;
  TORCH_CHECK(images.dim() == 4 && images.size(1) == options_.num_channels &&
                  images.size(2) == side && images.size(3) == side,
              fmt::format("vit: images must be [B, {}, {}, {}], got [{}]",
                          options_.num_channels,
                          side,
                          side,
                          fmt::join(images.sizes(), ", ")));
  const int64_t batch = images.size(0);
  // In the parameters' dtype, as HF does. [B, C, H, W] -> [B, D, H/P, W/P] -> [B, N, D], patches
  // in row-major order.
  const at::Tensor pixels = images.to(cls_token_.scalar_type());
  const at::Tensor patches = projection_(pixels).flatten(2).transpose(1, 2);
  const at::Tensor tokens = at::cat({cls_token_.expand({batch, 1, -1}), patches}, /*dim=*/1);
  return at::dropout(tokens + position_embeddings_, options_.hidden_dropout, is_training());
}

at::Tensor VitModelImpl::forward(const at::Tensor& images) {
  at::Tensor h = embed(images);
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto* impl = layers_[i]->as<VitLayerImpl>();
    const Block block = [impl](const at::Tensor& x) { return impl->forward(x); };
    h = run_block(block_runner_, static_cast<int64_t>(i), block, h);
  }
  return layernorm_(h);
}

BlockParameters VitModelImpl::block_parameters() const {
  BlockParameters blocks;
  for (const auto& layer : *layers_) blocks.push_back(layer->parameters());
  return blocks;
}

void VitModelImpl::set_attention(AttentionKind kind) {
  for (const auto& layer : *layers_) layer->as<VitLayerImpl>()->set_attention(kind);
}

VitForImageClassificationImpl::VitForImageClassificationImpl(const VitOptions& options)
    : options_(options) {
  vit_ = register_module("vit", VitModel(options));
  classifier_ = register_module("classifier",
                                Linear(options.d_model,
                                       options.num_labels,
                                       /*bias=*/true,
                                       options.param_options,
                                       options.init_std));
}

at::Tensor VitForImageClassificationImpl::forward(const at::Tensor& images) {
  const at::Tensor hidden = vit_(images);
  return classifier_(hidden.select(/*dim=*/1, /*index=*/0));  // the class token
}

}  // namespace gpudays::models
