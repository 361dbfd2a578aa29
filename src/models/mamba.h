// Mamba-1 causal language model, single-device, as HuggingFace's MambaForCausalLM: embeddings,
// blocks of RMSNorm + selective-SSM mixer with a residual, final RMSNorm, head tied to the
// embeddings. Parameter names equal HF checkpoints; training methods are applied from outside.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "catalog/model_spec.h"
#include "models/block_runner.h"
#include "models/layers.h"
#include "models/selective_scan.h"

namespace gpudays::models {

// transformers' MambaConfig defaults (as in state-spaces/mamba-2.8b-hf's config.json); the
// catalog's fields of the same names (ArchSpec) default to them.
inline constexpr double kMambaInitStd = 0.1;         // initializer_range
inline constexpr double kMambaTimeStepMin = 0.001;   // time_step_min
inline constexpr double kMambaTimeStepMax = 0.1;     // time_step_max
inline constexpr double kMambaTimeStepFloor = 1e-4;  // time_step_floor
inline constexpr double kMambaTimeStepScale = 1.0;   // time_step_scale

struct MambaOptions {
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t vocab_size = 0;
  int64_t d_state = 16;  // N
  int64_t d_conv = 4;    // causal depthwise convolution kernel
  int64_t expand = 2;    // d_inner = expand * d_model
  int64_t dt_rank = 0;   // rank of the delta projection
  bool conv_bias = true;
  bool proj_bias = false;  // bias of in_proj and out_proj
  double layer_norm_eps = 1e-5;
  bool residual_in_fp32 = true;     // residual stream in >= fp32 (HF residual_in_fp32)
  double init_std = kMambaInitStd;  // embeddings, in_proj, x_proj ~ N(0, init_std)
  // dt_proj initialisation (HF time_step_*): bias softplus^-1 of dt log-uniform in
  // [time_step_min, time_step_max] floored at time_step_floor; weight U(+-scale / sqrt(dt_rank)).
  double time_step_min = kMambaTimeStepMin;
  double time_step_max = kMambaTimeStepMax;
  double time_step_floor = kMambaTimeStepFloor;
  double time_step_scale = kMambaTimeStepScale;
  ScanKind scan = ScanKind::kPlain;
  at::TensorOptions param_options;  // device and dtype of the parameters (meta: no allocation)

  int64_t d_inner() const { return expand * d_model; }
};

// The options of a catalog model (family mamba; otherwise InputError naming the family).
MambaOptions mamba_options(const ModelSpec& spec, const at::TensorOptions& param_options);

// Causal depthwise convolution over time: weight [C, 1, K], bias [C]; input padded by K - 1 on
// both sides (as nn.Conv1d(padding=K-1)) and the output truncated to the first T steps.
class MambaConv1dImpl : public torch::nn::Module {
 public:
  MambaConv1dImpl(int64_t channels,
                  int64_t kernel_size,
                  bool bias,
                  const at::TensorOptions& options);
  at::Tensor forward(const at::Tensor& x);  // x: [B, C, T] -> [B, C, T]

 private:
  int64_t kernel_size_;
  at::Tensor weight_;
  at::Tensor bias_;
};
TORCH_MODULE(MambaConv1d);

// The selective SSM (HF MambaMixer): in_proj to x and gate z, conv1d + SiLU, x_proj to
// (delta, B, C), dt_proj + softplus, selective scan with A = -exp(A_log), D skip, SiLU(z) gate,
// out_proj.
class MambaMixerImpl : public torch::nn::Module {
 public:
  explicit MambaMixerImpl(const MambaOptions& options);
  at::Tensor forward(const at::Tensor& x);  // [B, T, d_model] -> [B, T, d_model]
  void set_scan(ScanKind kind) { scan_ = kind; }

 private:
  // HF _init_weights for a MambaMixer, including init_mamba_weights.
  void init_weights(const MambaOptions& options);

  int64_t d_state_;
  int64_t dt_rank_;
  ScanKind scan_;
  at::Tensor A_log_;  // [d_inner, d_state]
  at::Tensor D_;      // [d_inner]
  MambaConv1d conv1d_{nullptr};
  Linear in_proj_{nullptr};
  Linear x_proj_{nullptr};
  Linear dt_proj_{nullptr};
  Linear out_proj_{nullptr};
};
TORCH_MODULE(MambaMixer);

// x + mixer(norm(x)) (HF MambaBlock).
class MambaBlockImpl : public torch::nn::Module {
 public:
  explicit MambaBlockImpl(const MambaOptions& options);
  at::Tensor forward(const at::Tensor& x);  // [B, T, d_model] -> [B, T, d_model]
  MambaMixer& mixer() { return mixer_; }

 private:
  bool residual_in_fp32_;
  RmsNorm norm_{nullptr};  // HF MambaRMSNorm
  MambaMixer mixer_{nullptr};
};
TORCH_MODULE(MambaBlock);

// The trunk (HF MambaModel, prefix "backbone"): embeddings, blocks, norm_f.
class MambaModelImpl : public torch::nn::Module {
 public:
  explicit MambaModelImpl(const MambaOptions& options);
  at::Tensor forward(const at::Tensor& tokens);  // tokens: [B, T] int64 -> hidden: [B, T, D]
  const Embedding& embeddings() const { return embeddings_; }
  void set_scan(ScanKind kind);
  // The residual blocks are the blocks (backbone.layers.N), in order.
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  BlockParameters block_parameters() const;

 private:
  BlockRunner block_runner_;
  Embedding embeddings_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  RmsNorm norm_f_{nullptr};
};
TORCH_MODULE(MambaModel);

// The causal LM (HF MambaForCausalLM): trunk and lm_head tied to backbone.embeddings.
class MambaForCausalLMImpl : public torch::nn::Module {
 public:
  explicit MambaForCausalLMImpl(const MambaOptions& options);
  at::Tensor forward(const at::Tensor& tokens);  // tokens: [B, T] int64 -> logits: [B, T, V]
  void set_scan(ScanKind kind);                  // per run: kPlain or kFused in every mixer
  void set_block_runner(BlockRunner runner) { backbone_->set_block_runner(std::move(runner)); }
  BlockParameters block_parameters() const { return backbone_->block_parameters(); }
  const MambaOptions& options() const { return options_; }

 private:
  MambaOptions options_;
  MambaModel backbone_{nullptr};
};
TORCH_MODULE(MambaForCausalLM);

}  // namespace gpudays::models
