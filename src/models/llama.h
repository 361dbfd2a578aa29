// Llama-style causal language model (the catalog's llama family), single-device: pre-norm
// decoder layers with RMSNorm, grouped-query attention with rotary positions over the whole head,
// a SwiGLU MLP, no biases. Two variants differ in one detail: Qwen2 (biases on q, k and v) and
// OLMo (a LayerNorm without weight or bias in place of each RMSNorm). Parameter names equal
// transformers' LlamaForCausalLM / Qwen2ForCausalLM / OlmoForCausalLM; methods are applied from
// outside (docs/models.md, "llama").
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "catalog/model_spec.h"
#include "models/attention.h"
#include "models/block_runner.h"
#include "models/layers.h"
#include "models/rotary.h"

namespace gpudays::models {

// OlmoLayerNorm's eps, fixed in transformers' modeling_olmo.py.
inline constexpr double kOlmoLayerNormEps = 1e-5;

struct LlamaOptions {
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;     // query heads
  int64_t n_kv_heads = 0;  // key/value heads, dividing n_heads
  int64_t head_dim = 0;    // q, k and v width per head (rotary over all of it)
  int64_t d_ffn = 0;       // SwiGLU intermediate size
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rotary_base = 10000.0;      // rope_theta
  double rms_norm_eps = 1e-6;        // unused with parameter_free_norm (kOlmoLayerNormEps)
  bool qkv_bias = false;             // Qwen2
  bool parameter_free_norm = false;  // OLMo
  bool tie_word_embeddings = false;
  double attention_dropout = 0.0;  // on the attention probabilities (HF attention_dropout)
  double init_std = kInitStd;      // weights ~ N(0, init_std) (HF initializer_range)
  AttentionKind attention = AttentionKind::kPlain;
  at::TensorOptions param_options;  // device and dtype of the parameters (meta: no allocation)
};

// The options of a catalog model (family llama; otherwise InputError naming the family).
LlamaOptions llama_options(const ModelSpec& spec, const at::TensorOptions& param_options);

class LlamaAttentionImpl : public torch::nn::Module {
 public:
  explicit LlamaAttentionImpl(const LlamaOptions& options);
  at::Tensor forward(const at::Tensor& x, const RotaryTables& rotary);  // [B, T, D] -> [B, T, D]
  void set_attention(AttentionKind kind) { attention_ = kind; }

 private:
  int64_t n_heads_;
  int64_t n_kv_heads_;
  double dropout_;
  AttentionKind attention_;
  Linear q_proj_{nullptr};
  Linear k_proj_{nullptr};
  Linear v_proj_{nullptr};
  Linear o_proj_{nullptr};
};
TORCH_MODULE(LlamaAttention);

// down(silu(gate(x)) * up(x)), no biases.
class LlamaMlpImpl : public torch::nn::Module {
 public:
  explicit LlamaMlpImpl(const LlamaOptions& options);
  at::Tensor forward(const at::Tensor& x);  // [B, T, D] -> [B, T, D]

 private:
  Linear gate_proj_{nullptr};
  Linear up_proj_{nullptr};
  Linear down_proj_{nullptr};
};
TORCH_MODULE(LlamaMlp);

// RMSNorm with a weight (Llama, Qwen2) or OLMo's LayerNorm without weight or bias (eps 1e-5), both
// in >= fp32 and cast back; OLMo's holds no tensor, so its checkpoint has none.
class LlamaNormImpl : public torch::nn::Module {
 public:
  explicit LlamaNormImpl(const LlamaOptions& options);
  at::Tensor forward(const at::Tensor& x);  // x: [..., D] -> [..., D]

 private:
  int64_t dim_;
  double eps_;
  at::Tensor weight_;  // [D]; undefined: parameter-free LayerNorm
};
TORCH_MODULE(LlamaNorm);

// x + attn(norm1(x)), then h + mlp(norm2(h)) (transformers' LlamaDecoderLayer).
class LlamaDecoderLayerImpl : public torch::nn::Module {
 public:
  explicit LlamaDecoderLayerImpl(const LlamaOptions& options);
  at::Tensor forward(const at::Tensor& x, const RotaryTables& rotary);  // [B, T, D] -> [B, T, D]
  LlamaAttention& self_attn() { return self_attn_; }

 private:
  LlamaAttention self_attn_{nullptr};
  LlamaMlp mlp_{nullptr};
  LlamaNorm input_layernorm_{nullptr};
  LlamaNorm post_attention_layernorm_{nullptr};
};
TORCH_MODULE(LlamaDecoderLayer);

// The trunk: embedding, layers, final norm (transformers' LlamaModel, prefix "model").
class LlamaModelImpl : public torch::nn::Module {
 public:
  explicit LlamaModelImpl(const LlamaOptions& options);
  at::Tensor forward(const at::Tensor& tokens);  // tokens: [B, T] int64 -> hidden: [B, T, D]
  const Embedding& embed_tokens() const { return embed_tokens_; }
  void set_attention(AttentionKind kind);
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  BlockParameters block_parameters() const;

 private:
  LlamaOptions options_;
  BlockRunner block_runner_;
  Embedding embed_tokens_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  LlamaNorm norm_{nullptr};
};
TORCH_MODULE(LlamaModel);

// The causal LM: trunk "model" and output projection "lm_head" (the embedding when tied).
class LlamaForCausalLMImpl : public torch::nn::Module {
 public:
  explicit LlamaForCausalLMImpl(const LlamaOptions& options);
  at::Tensor forward(const at::Tensor& tokens);  // tokens: [B, T] int64 -> logits: [B, T, V]
  void set_attention(AttentionKind kind) { model_->set_attention(kind); }
  void set_block_runner(BlockRunner runner) { model_->set_block_runner(std::move(runner)); }
  BlockParameters block_parameters() const { return model_->block_parameters(); }
  const LlamaOptions& options() const { return options_; }

 private:
  LlamaOptions options_;
  LlamaModel model_{nullptr};
  Linear lm_head_{nullptr};  // absent when tie_word_embeddings
};
TORCH_MODULE(LlamaForCausalLM);

}  // namespace gpudays::models
