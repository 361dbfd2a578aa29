// ConvNeXt forward pass, following HuggingFace's modeling_convnext: blocks in channels-last for
// the LayerNorm and the pointwise MLP (Linear layers), channels-first for the convolutions; stage
// 0 has no downsampling layer; the pooled features go through the final LayerNorm.
#include "models/convnext.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/rand.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays::models {
namespace {

// LayerNorm over the channels of [B, C, H, W] (HF ConvNextLayerNorm, data_format channels_first).
at::Tensor norm_channels_first(LayerNorm& norm, const at::Tensor& x) {
  return norm(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

// Stochastic depth: each sample's branch is dropped with probability p, kept ones scaled 1/(1-p).
at::Tensor drop_path(const at::Tensor& branch, double p, bool train) {
  if (p == 0.0 || !train) return branch;
  std::vector<int64_t> shape(branch.dim(), 1);
  shape[0] = branch.size(0);
  const at::Tensor keep = at::floor(at::rand(shape, branch.options()) + (1.0 - p));
  return branch / (1.0 - p) * keep;
}

// Per-block drop-path rates: linear from 0 to `rate` over all blocks, split by stage (HF).
std::vector<std::vector<double>> drop_path_rates(const ConvnextOptions& o) {
  const int64_t total = std::accumulate(o.depths.begin(), o.depths.end(), int64_t{0});
  std::vector<std::vector<double>> rates;
  int64_t block = 0;
  for (const int64_t depth : o.depths) {
    rates.emplace_back();
    for (int64_t j = 0; j < depth; ++j, ++block) {
      rates.back().push_back(total > 1 ? o.drop_path_rate * block / (total - 1) : 0.0);
    }
  }
  return rates;
}

}  // namespace

ConvnextOptions convnext_options(const ModelSpec& spec, const at::TensorOptions& param_options) {
  if (spec.family != Family::kConvnext) {
    throw InputError(
        fmt::format("model '{}' is a {} model, not convnext", spec.name, to_string(spec.family)));
  }
  validate_model(spec);  // one hidden size per stage, image size a multiple of the total stride
  const ArchSpec& a = spec.arch;
  ConvnextOptions o;
  o.depths = a.depths;
  o.hidden_sizes = a.hidden_sizes;
  o.image_size = a.image_size;
  o.num_channels = a.num_channels;
  o.num_labels = a.num_labels;
  o.layer_norm_eps = a.layer_norm_eps;
  o.layer_scale_init = a.layer_scale_init_value;
  o.drop_path_rate = a.drop_path_rate;
  o.init_std = a.initializer_range;
  o.param_options = param_options;
  return o;
}

ConvnextLayerImpl::ConvnextLayerImpl(int64_t dim, double drop_path, const ConvnextOptions& options)
    : drop_path_(drop_path) {
  const auto& p = options.param_options;
  const ConvOptions depthwise{.in_channels = dim,
                              .out_channels = dim,
                              .kernel_size = kConvnextKernelSize,
                              .padding = kConvnextKernelSize / 2,
                              .groups = dim,
                              .init_std = options.init_std};
  dwconv_ = register_module("dwconv", Conv(/*spatial_dims=*/2, depthwise, p));
  layernorm_ = register_module("layernorm", LayerNorm(dim, kConvnextInnerNormEps, p));
  pwconv1_ = register_module("pwconv1", Linear(dim, 4 * dim, /*bias=*/true, p, options.init_std));
  pwconv2_ = register_module("pwconv2", Linear(4 * dim, dim, /*bias=*/true, p, options.init_std));
  layer_scale_ = register_parameter("layer_scale_parameter",
                                    at::empty({dim}, p).fill_(options.layer_scale_init));
}

at::Tensor ConvnextLayerImpl::forward(const at::Tensor& x) {
  at::Tensor h = dwconv_(x).permute({0, 2, 3, 1});  // [B, H, W, C]
  h = pwconv2_(at::gelu(pwconv1_(layernorm_(h)), /*approximate=*/"none"));
  h = (layer_scale_ * h).permute({0, 3, 1, 2});  // [B, C, H, W]
  return x + drop_path(h, drop_path_, is_training());
}

ConvnextStageImpl::ConvnextStageImpl(int64_t stage,
                                     const std::vector<double>& drop_paths,
                                     const ConvnextOptions& options) {
  const auto& p = options.param_options;
  const int64_t out = options.hidden_sizes[stage];
  if (stage > 0) {  // HF: a downsampling layer wherever channels change or the stride is 2
    const int64_t in = options.hidden_sizes[stage - 1];
    const auto downsampling = register_module("downsampling_layer", torch::nn::ModuleList());
    downsample_norm_ = LayerNorm(in, kConvnextInnerNormEps, p);
    downsample_conv_ = Conv(/*spatial_dims=*/2,
                            ConvOptions{.in_channels = in,
                                        .out_channels = out,
                                        .kernel_size = 2,
                                        .stride = 2,
                                        .init_std = options.init_std},
                            p);
    downsampling->push_back(downsample_norm_);  // .0
    downsampling->push_back(downsample_conv_);  // .1
  }
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (const double rate : drop_paths) layers_->push_back(ConvnextLayer(out, rate, options));
}

at::Tensor ConvnextStageImpl::forward(const at::Tensor& x,
                                      const BlockRunner& runner,
                                      int64_t first_block) {
  at::Tensor h = x;
  if (downsample_conv_) h = downsample_conv_(norm_channels_first(downsample_norm_, h));
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto* impl = layers_[i]->as<ConvnextLayerImpl>();
    const Block block = [impl](const at::Tensor& y) { return impl->forward(y); };
    h = run_block(runner, first_block + static_cast<int64_t>(i), block, h);
  }
  return h;
}

void ConvnextStageImpl::append_block_parameters(BlockParameters& blocks) const {
  for (const auto& layer : *layers_) blocks.push_back(layer->parameters());
}

ConvnextForImageClassificationImpl::ConvnextForImageClassificationImpl(
    const ConvnextOptions& options)
    : options_(options) {
  TORCH_CHECK(!options.depths.empty() && options.depths.size() == options.hidden_sizes.size(),
              "convnext: one hidden size per stage");
  const auto& p = options.param_options;
  const int64_t d0 = options.hidden_sizes.front();
  const int64_t d_last = options.hidden_sizes.back();
  const auto convnext = add_group(*this, "convnext");
  const auto embeddings = add_group(*convnext, "embeddings");
  const ConvOptions stem{.in_channels = options.num_channels,
                         .out_channels = d0,
                         .kernel_size = kConvnextPatchSize,
                         .stride = kConvnextPatchSize,
                         .init_std = options.init_std};
  stem_ = embeddings->register_module("patch_embeddings", Conv(/*spatial_dims=*/2, stem, p));
  stem_norm_ = embeddings->register_module("layernorm", LayerNorm(d0, kConvnextInnerNormEps, p));
  stages_ = add_group(*convnext, "encoder")->register_module("stages", torch::nn::ModuleList());
  const auto rates = drop_path_rates(options);
  for (size_t s = 0; s < options.depths.size(); ++s) {
    stages_->push_back(ConvnextStage(static_cast<int64_t>(s), rates[s], options));
  }
  final_norm_ =
      convnext->register_module("layernorm", LayerNorm(d_last, options.layer_norm_eps, p));
  classifier_ = register_module(
      "classifier", Linear(d_last, options.num_labels, /*bias=*/true, p, options.init_std));
}

at::Tensor ConvnextForImageClassificationImpl::forward(const at::Tensor& images) {
  TORCH_CHECK(images.dim() == 4 && images.size(1) == options_.num_channels,
              fmt::format("convnext: images must be [B, {}, H, W], got [{}]",
                          options_.num_channels,
                          fmt::join(images.sizes(), ", ")));
  at::Tensor h =
      norm_channels_first(stem_norm_, stem_(images.to(classifier_->weight().scalar_type())));
  int64_t first_block = 0;
  for (const auto& stage : *stages_) {
    auto* impl = stage->as<ConvnextStageImpl>();
    h = impl->forward(h, block_runner_, first_block);
    first_block += impl->block_count();
  }
  const at::Tensor pooled = h.mean({-2, -1});  // global average pool: [B, C]
  return classifier_(final_norm_(pooled));
}

BlockParameters ConvnextForImageClassificationImpl::block_parameters() const {
  BlockParameters blocks;
  for (const auto& stage : *stages_) {
    stage->as<ConvnextStageImpl>()->append_block_parameters(blocks);
  }
  return blocks;
}

}  // namespace gpudays::models
