// GPT-NeoX forward pass, following HuggingFace's modeling_gpt_neox: fused QKV projection laid out
// per head ([q | k | v] for each head), rotate-half rotary embeddings on the first rotary_dims of
// each head, parallel (or sequential) residual, exact-erf GELU MLP.
#include "models/gpt_neox.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/linear.h>
#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays::models {

GptNeoxOptions gpt_neox_options(const ModelSpec& spec, const at::TensorOptions& param_options) {
  if (spec.family != Family::kGptNeox) {
    throw InputError(
        fmt::format("model '{}' is a {} model, not gpt_neox", spec.name, to_string(spec.family)));
  }
  validate_model(spec);  // heads divide d_model, rotary dimensions even, ...
  const ArchSpec& a = spec.arch;
  GptNeoxOptions o;
  o.n_layers = a.n_layers;
  o.d_model = a.d_model;
  o.n_heads = a.n_heads;
  o.d_ffn = a.d_ffn;
  o.vocab_size = a.vocab_size;
  o.max_position_embeddings = a.max_position_embeddings;
  o.rotary_pct = a.rotary_pct;
  o.rotary_base = a.rotary_emb_base;
  o.layer_norm_eps = a.layer_norm_eps;
  o.use_parallel_residual = a.use_parallel_residual;
  o.tie_word_embeddings = a.tie_word_embeddings;
  o.hidden_dropout = spec.recipe.dropout;
  o.init_std = a.initializer_range;
  o.param_options = param_options;
  return o;
}

RotaryTables rotary_tables(const GptNeoxOptions& options, int64_t seq_len, const at::Tensor& like) {
  return rotary_tables(options.rotary_dims(), options.rotary_base, seq_len, like);
}

GptNeoxAttentionImpl::GptNeoxAttentionImpl(const GptNeoxOptions& options)
    : n_heads_(options.n_heads), head_dim_(options.head_dim()), attention_(options.attention) {
  const int64_t d = options.d_model;
  query_key_value_ = register_module(
      "query_key_value", Linear(d, 3 * d, /*bias=*/true, options.param_options, options.init_std));
  dense_ = register_module("dense",
                           Linear(d, d, /*bias=*/true, options.param_options, options.init_std));
}

at::Tensor GptNeoxAttentionImpl::forward(const at::Tensor& x, const RotaryTables& rotary) {
  const int64_t batch = x.size(0);
  const int64_t seq = x.size(1);
  // [B, T, 3D] -> [B, H, T, 3 * head_dim]: each head holds its own q, k and v in turn.
  const at::Tensor qkv =
      query_key_value_(x).view({batch, seq, n_heads_, 3 * head_dim_}).transpose(1, 2);
  const std::vector<at::Tensor> parts = qkv.chunk(3, /*dim=*/-1);
  const at::Tensor q = apply_rotary(parts[0], rotary);
  const at::Tensor k = apply_rotary(parts[1], rotary);
  const at::Tensor out =
      attend(q, k, parts[2], AttentionMask{.causal = true, .key_keep = {}}, attention_);
  return dense_(out.transpose(1, 2).reshape({batch, seq, n_heads_ * head_dim_}));
}

GptNeoxMlpImpl::GptNeoxMlpImpl(const GptNeoxOptions& options) {
  const auto& p = options.param_options;
  dense_h_to_4h_ = register_module(
      "dense_h_to_4h", Linear(options.d_model, options.d_ffn, /*bias=*/true, p, options.init_std));
  dense_4h_to_h_ = register_module(
      "dense_4h_to_h", Linear(options.d_ffn, options.d_model, /*bias=*/true, p, options.init_std));
}

at::Tensor GptNeoxMlpImpl::forward(const at::Tensor& x) {
  return dense_4h_to_h_(at::gelu(dense_h_to_4h_(x), /*approximate=*/"none"));
}

GptNeoxLayerImpl::GptNeoxLayerImpl(const GptNeoxOptions& options)
    : parallel_residual_(options.use_parallel_residual), dropout_(options.hidden_dropout) {
  const auto& p = options.param_options;
  input_layernorm_ =
      register_module("input_layernorm", LayerNorm(options.d_model, options.layer_norm_eps, p));
  post_attention_layernorm_ = register_module(
      "post_attention_layernorm", LayerNorm(options.d_model, options.layer_norm_eps, p));
  attention_ = register_module("attention", GptNeoxAttention(options));
  mlp_ = register_module("mlp", GptNeoxMlp(options));
}

at::Tensor GptNeoxLayerImpl::forward(const at::Tensor& x, const RotaryTables& rotary) {
  const bool train = is_training();
  at::Tensor attn = at::dropout(attention_(input_layernorm_(x), rotary), dropout_, train);
  if (parallel_residual_) {
    // x + attn(ln1(x)) + mlp(ln2(x)): both branches read the same input.
    const at::Tensor mlp = at::dropout(mlp_(post_attention_layernorm_(x)), dropout_, train);
    return mlp + attn + x;
  }
  attn = attn + x;
  const at::Tensor mlp = at::dropout(mlp_(post_attention_layernorm_(attn)), dropout_, train);
  return mlp + attn;
}

GptNeoxModelImpl::GptNeoxModelImpl(const GptNeoxOptions& options) : options_(options) {
  const auto& p = options.param_options;
  embed_in_ = register_module(
      "embed_in",
      Embedding(options.vocab_size, options.d_model, p, /*padding_idx=*/-1, options.init_std));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.n_layers; ++i) layers_->push_back(GptNeoxLayer(options));
  final_layer_norm_ =
      register_module("final_layer_norm", LayerNorm(options.d_model, options.layer_norm_eps, p));
}

at::Tensor GptNeoxModelImpl::forward(const at::Tensor& tokens) {
  TORCH_CHECK(tokens.dim() == 2, "gpt_neox: tokens must be [B, T], got ", tokens.sizes());
  TORCH_CHECK(tokens.size(1) <= options_.max_position_embeddings,
              "gpt_neox: ",
              tokens.size(1),
              " tokens exceed max_position_embeddings ",
              options_.max_position_embeddings);
  at::Tensor h = at::dropout(embed_in_(tokens), options_.hidden_dropout, is_training());
  const RotaryTables rotary = rotary_tables(options_, tokens.size(1), h);
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto* impl = layers_[i]->as<GptNeoxLayerImpl>();
    const Block block = [impl, rotary](const at::Tensor& x) { return impl->forward(x, rotary); };
    h = run_block(block_runner_, static_cast<int64_t>(i), block, h);
  }
  return final_layer_norm_(h);
}

BlockParameters GptNeoxModelImpl::block_parameters() const {
  BlockParameters blocks;
  for (const auto& layer : *layers_) blocks.push_back(layer->parameters());
  return blocks;
}

void GptNeoxModelImpl::set_attention(AttentionKind kind) {
  for (const auto& layer : *layers_)
    layer->as<GptNeoxLayerImpl>()->attention()->set_attention(kind);
}

GptNeoxForCausalLMImpl::GptNeoxForCausalLMImpl(const GptNeoxOptions& options) : options_(options) {
  gpt_neox_ = register_module("gpt_neox", GptNeoxModel(options));
  if (!options.tie_word_embeddings) {
    embed_out_ = register_module("embed_out",
                                 Linear(options.d_model,
                                        options.vocab_size,
                                        /*bias=*/false,
                                        options.param_options,
                                        options.init_std));
  }
}

at::Tensor GptNeoxForCausalLMImpl::forward(const at::Tensor& tokens) {
  const at::Tensor hidden = gpt_neox_(tokens);
  if (options_.tie_word_embeddings) return at::linear(hidden, gpt_neox_->embed_in()->weight());
  return embed_out_(hidden);
}

}  // namespace gpudays::models
