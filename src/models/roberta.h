// RoBERTa masked language model (HF RobertaForMaskedLM), single-device: learned positions with
// RoBERTa's padding offset, post-LN encoder, GELU, LM head tied to the input embeddings; and the
// original recipe's MLM masking (15% of tokens: 80% <mask>, 10% random, 10% unchanged).
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "catalog/model_spec.h"
#include "models/attention.h"
#include "models/block_runner.h"
#include "models/layers.h"

namespace gpudays::models {

// roberta-large's tokenizer: <s> 0, <pad> 1, </s> 2, <unk> 3, <mask> the last id (50264). <s>,
// <pad> and </s> are catalog fields (HF bos/pad/eos_token_id; these are the defaults); <unk> is
// not in RobertaConfig.
inline constexpr int64_t kRobertaBosId = 0;
inline constexpr int64_t kRobertaEosId = 2;
inline constexpr int64_t kRobertaUnkId = 3;

struct RobertaOptions {
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ffn = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;  // includes the padding offset pad_token_id + 1
  int64_t type_vocab_size = 1;
  int64_t pad_token_id = 1;
  int64_t bos_token_id = kRobertaBosId;
  int64_t eos_token_id = kRobertaEosId;
  double layer_norm_eps = 1e-5;
  double hidden_dropout = 0.1;     // HF hidden_dropout_prob
  double attention_dropout = 0.1;  // HF attention_probs_dropout_prob
  double init_std = kInitStd;      // weights ~ N(0, init_std) (HF initializer_range)
  AttentionKind attention = AttentionKind::kPlain;
  at::TensorOptions param_options;
};

// The options of a catalog model (family roberta; dropout from the recipe, for both kinds).
RobertaOptions roberta_options(const ModelSpec& spec, const at::TensorOptions& param_options);

// tokens: [B, T] int64 -> positions: [B, T] int64; pad_token_id + 1, + 2, ... over non-padding
// tokens, pad_token_id on padding (fairseq's make_positions).
at::Tensor roberta_position_ids(const at::Tensor& tokens, int64_t pad_token_id);

class RobertaLayerImpl : public torch::nn::Module {
 public:
  explicit RobertaLayerImpl(const RobertaOptions& options);
  at::Tensor forward(const at::Tensor& x, const AttentionMask& mask);  // [B, T, D] -> [B, T, D]
  void set_attention(AttentionKind kind) { attention_ = kind; }

 private:
  int64_t n_heads_;
  double hidden_dropout_;
  double attention_dropout_;
  AttentionKind attention_;
  Linear query_{nullptr}, key_{nullptr}, value_{nullptr}, attention_dense_{nullptr};
  LayerNorm attention_norm_{nullptr};
  Linear intermediate_{nullptr}, output_{nullptr};
  LayerNorm output_norm_{nullptr};
};
TORCH_MODULE(RobertaLayer);

class RobertaForMaskedLMImpl : public torch::nn::Module {
 public:
  explicit RobertaForMaskedLMImpl(const RobertaOptions& options);
  // tokens: [B, T] int64, attention_mask: [B, T] (1 token, 0 padding; undefined: no padding)
  //   -> logits: [B, T, V]
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& attention_mask = {});
  void set_attention(AttentionKind kind);
  // The encoder layers are the blocks (roberta.encoder.layer.N), in order.
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  BlockParameters block_parameters() const;
  const RobertaOptions& options() const { return options_; }

 private:
  at::Tensor embed(const at::Tensor& tokens);  // [B, T] -> [B, T, D]

  RobertaOptions options_;
  BlockRunner block_runner_;
  Embedding word_embeddings_{nullptr}, position_embeddings_{nullptr};
  Embedding token_type_embeddings_{nullptr};
  LayerNorm embeddings_norm_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  Linear head_dense_{nullptr};
  LayerNorm head_norm_{nullptr};
  at::Tensor head_bias_;  // [V]; the decoder weight is word_embeddings' (tied)
};
TORCH_MODULE(RobertaForMaskedLM);

// MLM masking as HF's DataCollatorForLanguageModeling: each non-special token is selected with
// `probability`; a selected token becomes <mask> (80%), a random id (10%) or stays (10%).
struct MlmOptions {
  double probability = 0.15;
  int64_t mask_token_id = 0;
  int64_t vocab_size = 0;                  // random replacements are drawn from [0, vocab_size)
  std::vector<int64_t> special_token_ids;  // never selected (<s>, <pad>, </s>, <unk>, <mask>)
};
MlmOptions roberta_mlm_options(const ModelSpec& spec);

struct MlmBatch {
  at::Tensor inputs;  // [B, T] int64, masked
  at::Tensor labels;  // [B, T] int64: the original id where selected, -100 elsewhere
};
MlmBatch mask_tokens(const at::Tensor& tokens,
                     const MlmOptions& options,
                     std::optional<at::Generator> generator = std::nullopt);

}  // namespace gpudays::models
