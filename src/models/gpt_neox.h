// GPT-NeoX (Pythia) causal language model, single-device: parallel attention + MLP residual, rotary
// embeddings on part of each head, LayerNorm, exact GELU, untied output embedding. Parameter names
// equal HuggingFace's GPTNeoXForCausalLM checkpoints; training methods are applied from outside.
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

// Rotary base of every Pythia model and HF's default (`rotary_emb_base` / rope_theta).
inline constexpr double kGptNeoxRotaryBase = 10000.0;

struct GptNeoxOptions {
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ffn = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rotary_pct = 0.25;  // fraction of each head's dimensions that rotate
  double rotary_base = kGptNeoxRotaryBase;
  double layer_norm_eps = 1e-5;
  bool use_parallel_residual = true;
  bool tie_word_embeddings = false;
  double hidden_dropout = 0.0;  // after the embedding, attention and MLP (HF hidden_dropout)
  double init_std = kInitStd;   // weights ~ N(0, init_std) (HF initializer_range)
  AttentionKind attention = AttentionKind::kPlain;
  at::TensorOptions param_options;  // device and dtype of the parameters (meta: no allocation)

  int64_t head_dim() const { return d_model / n_heads; }
  int64_t rotary_dims() const { return static_cast<int64_t>(head_dim() * rotary_pct); }
};

// The options of a catalog model (family gpt_neox; otherwise InputError naming the family).
GptNeoxOptions gpt_neox_options(const ModelSpec& spec, const at::TensorOptions& param_options);

// Rotary tables for positions 0..T-1: cos, sin: [T, rotary_dims] in `like`'s dtype.
RotaryTables rotary_tables(const GptNeoxOptions& options, int64_t seq_len, const at::Tensor& like);

class GptNeoxAttentionImpl : public torch::nn::Module {
 public:
  explicit GptNeoxAttentionImpl(const GptNeoxOptions& options);
  at::Tensor forward(const at::Tensor& x, const RotaryTables& rotary);  // [B, T, D] -> [B, T, D]
  void set_attention(AttentionKind kind) { attention_ = kind; }

 private:
  int64_t n_heads_;
  int64_t head_dim_;
  AttentionKind attention_;
  Linear query_key_value_{nullptr};
  Linear dense_{nullptr};
};
TORCH_MODULE(GptNeoxAttention);

class GptNeoxMlpImpl : public torch::nn::Module {
 public:
  explicit GptNeoxMlpImpl(const GptNeoxOptions& options);
  at::Tensor forward(const at::Tensor& x);  // [B, T, D] -> [B, T, D]

 private:
  Linear dense_h_to_4h_{nullptr};
  Linear dense_4h_to_h_{nullptr};
};
TORCH_MODULE(GptNeoxMlp);

class GptNeoxLayerImpl : public torch::nn::Module {
 public:
  explicit GptNeoxLayerImpl(const GptNeoxOptions& options);
  at::Tensor forward(const at::Tensor& x, const RotaryTables& rotary);  // [B, T, D] -> [B, T, D]
  GptNeoxAttention& attention() { return attention_; }

 private:
  bool parallel_residual_;
  double dropout_;
  LayerNorm input_layernorm_{nullptr};
  LayerNorm post_attention_layernorm_{nullptr};
  GptNeoxAttention attention_{nullptr};
  GptNeoxMlp mlp_{nullptr};
};
TORCH_MODULE(GptNeoxLayer);

// The trunk: embedding, layers, final LayerNorm (HF GPTNeoXModel, prefix "gpt_neox").
class GptNeoxModelImpl : public torch::nn::Module {
 public:
  explicit GptNeoxModelImpl(const GptNeoxOptions& options);
  at::Tensor forward(const at::Tensor& tokens);  // tokens: [B, T] int64 -> hidden: [B, T, D]
  const Embedding& embed_in() const { return embed_in_; }
  void set_attention(AttentionKind kind);
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  BlockParameters block_parameters() const;

 private:
  GptNeoxOptions options_;
  BlockRunner block_runner_;
  Embedding embed_in_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  LayerNorm final_layer_norm_{nullptr};
};
TORCH_MODULE(GptNeoxModel);

// The causal LM (HF GPTNeoXForCausalLM): trunk and output embedding "embed_out".
class GptNeoxForCausalLMImpl : public torch::nn::Module {
 public:
  explicit GptNeoxForCausalLMImpl(const GptNeoxOptions& options);
  at::Tensor forward(const at::Tensor& tokens);  // tokens: [B, T] int64 -> logits: [B, T, V]
  void set_attention(AttentionKind kind) { gpt_neox_->set_attention(kind); }
  void set_block_runner(BlockRunner runner) { gpt_neox_->set_block_runner(std::move(runner)); }
  BlockParameters block_parameters() const { return gpt_neox_->block_parameters(); }
  const GptNeoxOptions& options() const { return options_; }

 private:
  GptNeoxOptions options_;
  GptNeoxModel gpt_neox_{nullptr};
  Linear embed_out_{nullptr};  // absent when tie_word_embeddings
};
TORCH_MODULE(GptNeoxForCausalLM);

}  // namespace gpudays::models
