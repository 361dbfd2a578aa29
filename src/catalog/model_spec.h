// Model catalog entries: an architecture (the public HuggingFace configuration) and its original
// training recipe. Pure data; parsing lives in model_loader.cpp, counting in param_count.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpudays {

enum class Family { kGptNeox, kRoberta, kVit, kConvnext, kMamba, kLlama };
enum class Precision { kFp32, kFp16, kBf16 };
enum class OptimizerKind { kAdam, kAdamW };
// kWsd: warm-up, stable at the peak, then a linear decay to min_lr over the last decay_steps
// (MiniCPM's warmup-stable-decay; SmolLM's "trapezoidal" schedule).
enum class ScheduleKind { kCosine, kLinear, kConstant, kWsd };

std::string to_string(Family family);
std::string to_string(Precision precision);
std::string to_string(OptimizerKind optimizer);
std::string to_string(ScheduleKind schedule);
Family parse_family(const std::string& text);  // throws InputError naming the valid choices
Precision parse_precision(const std::string& text);
bool is_vision(Family family);  // samples are images, not token sequences

// A recipe's optimizer steps at most (a run file's [schedule] steps too): 2^40.
inline constexpr int64_t kMaxTrainSteps = int64_t{1} << 40;

struct ArchSpec {
  // Sequence families (gpt_neox, roberta, vit, mamba, llama).
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;     // transformers only
  int64_t d_ffn = 0;       // transformers only
  int64_t vocab_size = 0;  // text families only
  int64_t seq_len = 0;     // tokens per sample; vit: patches + class token (derived)
  double layer_norm_eps = 1e-5;
  // Std of the normal initialisation (HF initializer_range; mamba's default is 0.1).
  double initializer_range = 0.02;
  // gpt_neox
  double rotary_pct = 0.0;
  double rotary_emb_base = 10000.0;     // HF rotary_emb_base (5.x: rope_parameters.rope_theta)
  int64_t max_position_embeddings = 0;  // gpt_neox, roberta, llama (roberta: + padding offset)
  bool tie_word_embeddings = false;
  bool use_parallel_residual = true;
  // Grouped-query attention and gated (SwiGLU) MLPs: the llama family's (always gated); in a
  // gpt_neox measurement's inline architecture, for the planner only.
  int64_t n_kv_heads = 0;                    // key/value heads; 0: n_heads
  bool gated_ffn = false;                    // three d_model x d_ffn matrices (gate, up, down)
  bool learned_position_embeddings = false;  // GPT-2's added table instead of rotary (gpt_neox)
  // llama: rotary over the whole head (rotary_pct 1), rotary_emb_base is rope_theta,
  // layer_norm_eps is rms_norm_eps, no biases but Qwen2's on q, k and v.
  int64_t head_dim = 0;                    // 0: d_model / n_heads
  bool qkv_bias = false;                   // Qwen2: biases on the q, k and v projections
  bool parameter_free_layer_norm = false;  // OLMo: LayerNorm without weight or bias, not RMSNorm
  int64_t attention_head_dim() const {
    return head_dim > 0 ? head_dim : (n_heads > 0 ? d_model / n_heads : 0);
  }
  int64_t key_value_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  // roberta
  int64_t type_vocab_size = 0;
  int64_t pad_token_id = 0;
  int64_t bos_token_id = 0;  // <s>; never masked, never drawn by the synthetic batch
  int64_t eos_token_id = 2;  // </s>; likewise
  // vit: dropout on the attention probabilities (hidden dropout is the recipe's `dropout`)
  double attention_probs_dropout_prob = 0.0;
  // vision (vit, convnext)
  int64_t image_size = 0;
  int64_t patch_size = 0;
  int64_t num_channels = 0;
  int64_t num_labels = 0;
  // convnext: blocks per stage and channels per stage
  std::vector<int64_t> depths;
  std::vector<int64_t> hidden_sizes;
  double drop_path_rate = 0.0;           // stochastic depth of the last block (linear from 0)
  double layer_scale_init_value = 1e-6;  // initial layer scale of every block
  // mamba
  int64_t d_state = 0;
  int64_t d_conv = 0;
  int64_t expand = 0;
  int64_t dt_rank = 0;
  bool conv_bias = true;
  bool proj_bias = false;
  // dt_proj initialisation: dt log-uniform in [time_step_min, time_step_max], floored at
  // time_step_floor; weight U(+-time_step_scale / sqrt(dt_rank)) (HF "random" scheme).
  double time_step_min = 0.001;
  double time_step_max = 0.1;
  double time_step_floor = 1e-4;
  double time_step_scale = 1.0;
};

struct RecipeSpec {
  int64_t global_batch = 0;  // samples per optimizer step
  int64_t train_steps = 0;
  Precision precision = Precision::kFp32;
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  double lr = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  ScheduleKind schedule = ScheduleKind::kConstant;
  int64_t warmup_steps = 0;
  int64_t decay_steps = 0;  // wsd only: the final linear decay
  double min_lr = 0.0;
  double clip_grad_norm = 0.0;  // 0: no clipping
  double dropout = 0.0;
  double mlm_probability = 0.0;  // masked LM only
};

// The run the model's authors reported (GPUs x days), for the GPU-days comparison.
struct ReportedRun {
  int64_t gpus = 0;
  double days = 0.0;
  std::string gpu;  // catalog name of the GPU, when known
  // The accelerator when it was not a GPU ("TPUv3 cores"); such a run has no GPU-days.
  std::string accelerator;
  std::string source;
  bool on_gpus() const { return accelerator.empty(); }
};

struct ModelSpec {
  std::string name;
  Family family = Family::kGptNeox;
  std::string hf_name;      // public HuggingFace configuration it mirrors
  std::string source_path;  // file it was read from
  ArchSpec arch;
  RecipeSpec recipe;
  std::optional<ReportedRun> reported;

  double reported_gpu_days() const {
    return reported && reported->on_gpus() ? reported->gpus * reported->days : 0.0;
  }
  int64_t tokens_per_sample() const { return arch.seq_len; }
};

}  // namespace gpudays
