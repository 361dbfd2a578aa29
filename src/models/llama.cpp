// Llama forward pass, following transformers' modeling_llama (and modeling_qwen2, modeling_olmo):
// separate q, k, v projections, rotate-half rotary positions over the whole head, grouped-query
// attention (attention.h), pre-norm residuals, SwiGLU MLP; initialisation as _init_weights.
#include "models/llama.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/silu.h>
#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays::models {

LlamaOptions llama_options(const ModelSpec& spec, const at::TensorOptions& param_options) {
  if (spec.family != Family::kLlama) {
    throw InputError(
        fmt::format("model '{}' is a {} model, not llama", spec.name, to_string(spec.family)));
  }
  validate_model(spec);  // key/value heads divide the query heads, head even, ...
  const ArchSpec& a = spec.arch;
  LlamaOptions o;
  o.n_layers = a.n_layers;
  o.d_model = a.d_model;
  o.n_heads = a.n_heads;
  o.n_kv_heads = a.key_value_heads();
  o.head_dim = a.attention_head_dim();
  o.d_ffn = a.d_ffn;
  o.vocab_size = a.vocab_size;
  o.max_position_embeddings = a.max_position_embeddings;
  o.rotary_base = a.rotary_emb_base;
  o.rms_norm_eps = a.layer_norm_eps;
  o.qkv_bias = a.qkv_bias;
  o.parameter_free_norm = a.parameter_free_layer_norm;
  o.tie_word_embeddings = a.tie_word_embeddings;
  o.attention_dropout = spec.recipe.dropout;  // config.json's attention_dropout (hf_config.h)
  o.init_std = a.initializer_range;
  o.param_options = param_options;
  return o;
}

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaOptions& options)
    : n_heads_(options.n_heads),
      n_kv_heads_(options.n_kv_heads),
      dropout_(options.attention_dropout),
      attention_(options.attention) {
  const int64_t d = options.d_model;
  const int64_t q_width = options.n_heads * options.head_dim;
  const int64_t kv_width = options.n_kv_heads * options.head_dim;
  const auto linear = [&](const char* name, int64_t in, int64_t out, bool bias) {
    return register_module(name, Linear(in, out, bias, options.param_options, options.init_std));
  };
  q_proj_ = linear("q_proj", d, q_width, options.qkv_bias);
  k_proj_ = linear("k_proj", d, kv_width, options.qkv_bias);
  v_proj_ = linear("v_proj", d, kv_width, options.qkv_bias);
  o_proj_ = linear("o_proj", q_width, d, /*bias=*/false);
}

at::Tensor LlamaAttentionImpl::forward(const at::Tensor& x, const RotaryTables& rotary) {
  // q: [B, H, T, hd]; k, v: [B, H_kv, T, hd]
  const at::Tensor q = apply_rotary(split_heads(q_proj_(x), n_heads_), rotary);
  const at::Tensor k = apply_rotary(split_heads(k_proj_(x), n_kv_heads_), rotary);
  const at::Tensor v = split_heads(v_proj_(x), n_kv_heads_);
  const double dropout = is_training() ? dropout_ : 0.0;
  const at::Tensor out =
      attend(q, k, v, AttentionMask{.causal = true, .key_keep = {}}, attention_, dropout);
  return o_proj_(merge_heads(out));
}

LlamaMlpImpl::LlamaMlpImpl(const LlamaOptions& options) {
  const auto linear = [&](const char* name, int64_t in, int64_t out) {
    return register_module(
        name, Linear(in, out, /*bias=*/false, options.param_options, options.init_std));
  };
  gate_proj_ = linear("gate_proj", options.d_model, options.d_ffn);
  up_proj_ = linear("up_proj", options.d_model, options.d_ffn);
  down_proj_ = linear("down_proj", options.d_ffn, options.d_model);
}

at::Tensor LlamaMlpImpl::forward(const at::Tensor& x) {
  return down_proj_(at::silu(gate_proj_(x)) * up_proj_(x));
}

LlamaNormImpl::LlamaNormImpl(const LlamaOptions& options)
    : dim_(options.d_model), eps_(options.rms_norm_eps) {
  if (options.parameter_free_norm) return;
  weight_ = register_parameter("weight", at::empty({dim_}, options.param_options).fill_(1));
}

at::Tensor LlamaNormImpl::forward(const at::Tensor& x) {
  if (weight_.defined()) return rms_norm(x, weight_, eps_);
  // OlmoLayerNorm: F.layer_norm(x.float(), eps=1e-5) without weight or bias, cast back.
  const at::Tensor wide = x.to(at_least_fp32(x.scalar_type()));
  return at::layer_norm(wide, {dim_}, /*weight=*/{}, /*bias=*/{}, kOlmoLayerNormEps)
      .to(x.scalar_type());
}

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const LlamaOptions& options) {
  self_attn_ = register_module("self_attn", LlamaAttention(options));
  mlp_ = register_module("mlp", LlamaMlp(options));
  input_layernorm_ = register_module("input_layernorm", LlamaNorm(options));
  post_attention_layernorm_ = register_module("post_attention_layernorm", LlamaNorm(options));
}

at::Tensor LlamaDecoderLayerImpl::forward(const at::Tensor& x, const RotaryTables& rotary) {
  const at::Tensor h = x + self_attn_(input_layernorm_(x), rotary);
  return h + mlp_(post_attention_layernorm_(h));
}

LlamaModelImpl::LlamaModelImpl(const LlamaOptions& options) : options_(options) {
  embed_tokens_ = register_module("embed_tokens",
                                  Embedding(options.vocab_size,
                                            options.d_model,
                                            options.param_options,
                                            /*padding_idx=*/-1,
                                            options.init_std));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.n_layers; ++i) layers_->push_back(LlamaDecoderLayer(options));
  norm_ = register_module("norm", LlamaNorm(options));
}

at::Tensor LlamaModelImpl::forward(const at::Tensor& tokens) {
  TORCH_CHECK(tokens.dim() == 2, "llama: tokens must be [B, T], got ", tokens.sizes());
  TORCH_CHECK(tokens.size(1) <= options_.max_position_embeddings,
              "llama: ",
              tokens.size(1),
              " tokens exceed max_position_embeddings ",
              options_.max_position_embeddings);
  at::Tensor h = embed_tokens_(tokens);
  const RotaryTables rotary =
      rotary_tables(options_.head_dim, options_.rotary_base, tokens.size(1), h);
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto* impl = layers_[i]->as<LlamaDecoderLayerImpl>();
    const Block block = [impl, rotary](const at::Tensor& x) { return impl->forward(x, rotary); };
    h = run_block(block_runner_, static_cast<int64_t>(i), block, h);
  }
  return norm_(h);
}

BlockParameters LlamaModelImpl::block_parameters() const {
  BlockParameters blocks;
  for (const auto& layer : *layers_) blocks.push_back(layer->parameters());
  return blocks;
}

void LlamaModelImpl::set_attention(AttentionKind kind) {
  for (const auto& layer : *layers_) {
    layer->as<LlamaDecoderLayerImpl>()->self_attn()->set_attention(kind);
  }
}

LlamaForCausalLMImpl::LlamaForCausalLMImpl(const LlamaOptions& options) : options_(options) {
  model_ = register_module("model", LlamaModel(options));
  if (!options.tie_word_embeddings) {
    lm_head_ = register_module("lm_head",
                               Linear(options.d_model,
                                      options.vocab_size,
                                      /*bias=*/false,
                                      options.param_options,
                                      options.init_std));
  }
}

at::Tensor LlamaForCausalLMImpl::forward(const at::Tensor& tokens) {
  const at::Tensor hidden = model_(tokens);
  if (options_.tie_word_embeddings) return at::linear(hidden, model_->embed_tokens()->weight());
  return lm_head_(hidden);
}

}  // namespace gpudays::models
