// RoBERTa forward pass following HuggingFace's modeling_roberta (post-LN: LayerNorm(x + f(x))
// after attention and after the MLP), and the MLM masking of DataCollatorForLanguageModeling.
#include "models/roberta.h"

#include <ATen/ops/bernoulli.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/full.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/isin.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays::models {

RobertaOptions roberta_options(const ModelSpec& spec, const at::TensorOptions& param_options) {
  if (spec.family != Family::kRoberta) {
    throw InputError(
        fmt::format("model '{}' is a {} model, not roberta", spec.name, to_string(spec.family)));
  }
  validate_model(spec);
  const ArchSpec& a = spec.arch;
  RobertaOptions o;
  o.n_layers = a.n_layers;
  o.d_model = a.d_model;
  o.n_heads = a.n_heads;
  o.d_ffn = a.d_ffn;
  o.vocab_size = a.vocab_size;
  o.max_position_embeddings = a.max_position_embeddings;
  o.type_vocab_size = a.type_vocab_size;
  o.pad_token_id = a.pad_token_id;
  o.bos_token_id = a.bos_token_id;
  o.eos_token_id = a.eos_token_id;
  o.layer_norm_eps = a.layer_norm_eps;
  o.hidden_dropout = spec.recipe.dropout;
  o.attention_dropout = spec.recipe.dropout;
  o.init_std = a.initializer_range;
  o.param_options = param_options;
  return o;
}

at::Tensor roberta_position_ids(const at::Tensor& tokens, int64_t pad_token_id) {
  const at::Tensor not_pad = tokens.ne(pad_token_id).to(at::kLong);
  return at::cumsum(not_pad, /*dim=*/1) * not_pad + pad_token_id;
}

RobertaLayerImpl::RobertaLayerImpl(const RobertaOptions& o)
    : n_heads_(o.n_heads),
      hidden_dropout_(o.hidden_dropout),
      attention_dropout_(o.attention_dropout),
      attention_(o.attention) {
  const auto& p = o.param_options;
  const int64_t d = o.d_model;
  // attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
  // intermediate.dense, output.{dense,LayerNorm}
  auto attention = add_group(*this, "attention");
  auto self = add_group(*attention, "self");
  query_ = self->register_module("query", Linear(d, d, /*bias=*/true, p, o.init_std));
  key_ = self->register_module("key", Linear(d, d, /*bias=*/true, p, o.init_std));
  value_ = self->register_module("value", Linear(d, d, /*bias=*/true, p, o.init_std));
  auto attention_output = add_group(*attention, "output");
  attention_dense_ =
      attention_output->register_module("dense", Linear(d, d, /*bias=*/true, p, o.init_std));
  attention_norm_ =
      attention_output->register_module("LayerNorm", LayerNorm(d, o.layer_norm_eps, p));
  intermediate_ = add_group(*this, "intermediate")
                      ->register_module("dense", Linear(d, o.d_ffn, /*bias=*/true, p, o.init_std));
  auto output = add_group(*this, "output");
  output_ = output->register_module("dense", Linear(o.d_ffn, d, /*bias=*/true, p, o.init_std));
  output_norm_ = output->register_module("LayerNorm", LayerNorm(d, o.layer_norm_eps, p));
}

at::Tensor RobertaLayerImpl::forward(const at::Tensor& x, const AttentionMask& mask) {
  const bool train = is_training();
  const at::Tensor q = split_heads(query_(x), n_heads_);
  const at::Tensor k = split_heads(key_(x), n_heads_);
  const at::Tensor v = split_heads(value_(x), n_heads_);
  const at::Tensor a =
      merge_heads(attend(q, k, v, mask, attention_, train ? attention_dropout_ : 0.0));
  const at::Tensor h =
      attention_norm_(at::dropout(attention_dense_(a), hidden_dropout_, train) + x);
  const at::Tensor f = output_(at::gelu(intermediate_(h)));
  return output_norm_(at::dropout(f, hidden_dropout_, train) + h);
}

RobertaForMaskedLMImpl::RobertaForMaskedLMImpl(const RobertaOptions& o) : options_(o) {
  const auto& p = o.param_options;
  auto roberta = add_group(*this, "roberta");
  auto embeddings = add_group(*roberta, "embeddings");
  word_embeddings_ = embeddings->register_module(
      "word_embeddings", Embedding(o.vocab_size, o.d_model, p, o.pad_token_id, o.init_std));
  position_embeddings_ = embeddings->register_module(
      "position_embeddings",
      Embedding(o.max_position_embeddings, o.d_model, p, o.pad_token_id, o.init_std));
  token_type_embeddings_ = embeddings->register_module(
      "token_type_embeddings",
      Embedding(o.type_vocab_size, o.d_model, p, /*padding_idx=*/-1, o.init_std));
  embeddings_norm_ =
      embeddings->register_module("LayerNorm", LayerNorm(o.d_model, o.layer_norm_eps, p));
  layers_ = add_group(*roberta, "encoder")->register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.n_layers; ++i) layers_->push_back(RobertaLayer(o));
  auto head = add_group(*this, "lm_head");
  head_dense_ =
      head->register_module("dense", Linear(o.d_model, o.d_model, /*bias=*/true, p, o.init_std));
  head_norm_ = head->register_module("layer_norm", LayerNorm(o.d_model, o.layer_norm_eps, p));
  head_bias_ = head->register_parameter("bias", at::zeros({o.vocab_size}, p));
}

at::Tensor RobertaForMaskedLMImpl::embed(const at::Tensor& tokens) {
  const at::Tensor positions = roberta_position_ids(tokens, options_.pad_token_id);
  const at::Tensor types = at::zeros_like(tokens);
  const at::Tensor e =
      word_embeddings_(tokens) + token_type_embeddings_(types) + position_embeddings_(positions);
  return at::dropout(embeddings_norm_(e), options_.hidden_dropout, is_training());
}

at::Tensor RobertaForMaskedLMImpl::forward(const at::Tensor& tokens,
                                           const at::Tensor& attention_mask) {
  TORCH_CHECK(tokens.dim() == 2, "roberta: tokens must be [B, T], got ", tokens.sizes());
  TORCH_CHECK(tokens.size(1) + options_.pad_token_id < options_.max_position_embeddings,
              "roberta: ",
              tokens.size(1),
              " tokens exceed the position table");
  AttentionMask mask;
  if (attention_mask.defined()) mask.key_keep = attention_mask.to(at::kBool);
  at::Tensor h = embed(tokens);
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto* impl = layers_[i]->as<RobertaLayerImpl>();
    const Block block = [impl, mask](const at::Tensor& x) { return impl->forward(x, mask); };
    h = run_block(block_runner_, static_cast<int64_t>(i), block, h);
  }
  const at::Tensor features = head_norm_(at::gelu(head_dense_(h)));
  return at::linear(features, word_embeddings_->weight(), head_bias_);
}

BlockParameters RobertaForMaskedLMImpl::block_parameters() const {
  BlockParameters blocks;
  for (const auto& layer : *layers_) blocks.push_back(layer->parameters());
  return blocks;
}

void RobertaForMaskedLMImpl::set_attention(AttentionKind kind) {
  for (const auto& layer : *layers_) layer->as<RobertaLayerImpl>()->set_attention(kind);
}

MlmOptions roberta_mlm_options(const ModelSpec& spec) {
  const RobertaOptions o = roberta_options(spec, {});
  MlmOptions m;
  m.probability = spec.recipe.mlm_probability;
  m.vocab_size = o.vocab_size;
  m.mask_token_id = o.vocab_size - 1;
  m.special_token_ids = {
      o.bos_token_id, o.pad_token_id, o.eos_token_id, kRobertaUnkId, m.mask_token_id};
  return m;
}

MlmBatch mask_tokens(const at::Tensor& tokens,
                     const MlmOptions& options,
                     std::optional<at::Generator> generator) {
  const auto probs = [&](double p) {
    return at::full(tokens.sizes(), p, at::TensorOptions().device(tokens.device()));
  };
  // One comparison per special id on the tokens' device (a tensor of the ids copied there would
  // make the host wait for the device at every batch).
  at::Tensor special = at::zeros_like(tokens, at::kBool);
  for (const int64_t id : options.special_token_ids) special.logical_or_(tokens.eq(id));
  const at::Tensor selected =
      at::bernoulli(probs(options.probability), generator).to(at::kBool).logical_and(~special);
  const at::Tensor to_mask = at::bernoulli(probs(0.8), generator).to(at::kBool) & selected;
  const at::Tensor to_random =
      at::bernoulli(probs(0.5), generator).to(at::kBool) & selected & ~to_mask;
  const at::Tensor random_ids =
      at::randint(options.vocab_size, tokens.sizes(), generator, tokens.options());
  at::Tensor inputs = at::where(to_mask, at::full_like(tokens, options.mask_token_id), tokens);
  inputs = at::where(to_random, random_ids, inputs);
  const at::Tensor labels = at::where(selected, tokens, at::full_like(tokens, -100));
  return {inputs, labels};
}

}  // namespace gpudays::models
