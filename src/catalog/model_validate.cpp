// Consistency checks of a ModelSpec: positive sizes, heads dividing the width, patches tiling the
// image, a sane recipe. Each failure names the file and the field.
#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays {
namespace {

// Upper bounds far beyond any real model, so that sizes, their products in the parameter count
// (d_model x d_ffn x layers < 2^63) and the planner's arithmetic stay exact and finite.
constexpr int64_t kMaxWidth = int64_t{1} << 20;  // d_model, d_ffn, hidden sizes, heads
constexpr int64_t kMaxLayers = 10'000;
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxSeqLen = int64_t{1} << 24;     // tokens per sample
constexpr int64_t kMaxPositions = 2 * kMaxSeqLen;    // room for RoBERTa's padding offset
constexpr int64_t kMaxChannels = int64_t{1} << 10;   // image channels (x patch area x width < 2^63)
constexpr int64_t kMaxImageSize = int64_t{1} << 16;  // pixels per side
constexpr size_t kMaxStages = 16;  // ConvNeXt stages: a stride of 4 x 2^15 exceeds any image
constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;
constexpr double kMinReportedDays = 1e-3;  // 86 s
constexpr double kMaxReportedDays = 1e5;   // 274 years

struct Checker {
  const ModelSpec& m;
  void require(bool ok, const char* table, const char* field, const std::string& why) const {
    if (!ok) throw InputError(fmt::format("{} [{}]: {}: {}", m.source_path, table, field, why));
  }
  void positive(int64_t v, const char* table, const char* field, int64_t max = kMaxWidth) const {
    require(v > 0 && v <= max, table, field, fmt::format("must be in [1, {}], is {}", max, v));
  }
};

void check_transformer(const Checker& c, const ArchSpec& a) {
  c.positive(a.n_layers, "arch", "n_layers", kMaxLayers);
  c.positive(a.d_model, "arch", "d_model");
  c.positive(a.n_heads, "arch", "n_heads");
  c.positive(a.d_ffn, "arch", "d_ffn");
  c.require(a.d_model % a.n_heads == 0,
            "arch",
            "n_heads",
            fmt::format("{} heads do not divide d_model {}", a.n_heads, a.d_model));
}

void check_probability(const Checker& c, double p, const char* field) {
  c.require(p >= 0.0 && p < 1.0, "arch", field, fmt::format("must be in [0, 1), is {}", p));
}

void check_gpt_neox(const Checker& c, const ArchSpec& a) {
  check_transformer(c, a);
  c.positive(a.vocab_size, "arch", "vocab_size", kMaxVocab);
  c.positive(a.seq_len, "arch", "seq_len", kMaxSeqLen);
  c.require(a.rotary_pct > 0.0 && a.rotary_pct <= 1.0, "arch", "rotary_pct", "must be in (0, 1]");
  const int64_t rotary_dims = static_cast<int64_t>((a.d_model / a.n_heads) * a.rotary_pct);
  c.require(rotary_dims % 2 == 0 && rotary_dims > 0,
            "arch",
            "rotary_pct",
            fmt::format("{} x head size {} gives {} rotary dimension{} per head; must be even "
                        "and at least 2",
                        a.rotary_pct,
                        a.d_model / a.n_heads,
                        rotary_dims,
                        rotary_dims == 1 ? "" : "s"));
  c.require(a.rotary_emb_base > 1.0,
            "arch",
            "rotary_emb_base",
            fmt::format("must be greater than 1, is {}", a.rotary_emb_base));
  c.positive(a.max_position_embeddings, "arch", "max_position_embeddings", kMaxPositions);
  c.require(
      a.seq_len <= a.max_position_embeddings,
      "arch",
      "seq_len",
      fmt::format("{} exceeds max_position_embeddings {}", a.seq_len, a.max_position_embeddings));
}

// Special ids lie below the last id, which is <mask> (roberta-large's tokenizer).
void check_special_id(const Checker& c, const ArchSpec& a, int64_t id, const char* field) {
  c.require(id >= 0 && id < a.vocab_size - 1,
            "arch",
            field,
            fmt::format("{} is not in [0, vocab_size - 1) = [0, {}) (the last id is <mask>)",
                        id,
                        a.vocab_size - 1));
}

void check_roberta(const Checker& c, const ArchSpec& a) {
  check_transformer(c, a);
  c.positive(a.vocab_size, "arch", "vocab_size", kMaxVocab);
  c.positive(a.seq_len, "arch", "seq_len", kMaxSeqLen);
  c.positive(a.max_position_embeddings, "arch", "max_position_embeddings", kMaxPositions);
  c.positive(a.type_vocab_size, "arch", "type_vocab_size", kMaxVocab);
  check_special_id(c, a, a.pad_token_id, "pad_token_id");
  check_special_id(c, a, a.bos_token_id, "bos_token_id");
  check_special_id(c, a, a.eos_token_id, "eos_token_id");
  c.require(a.seq_len + a.pad_token_id + 1 <= a.max_position_embeddings,
            "arch",
            "seq_len",
            fmt::format("{} + padding offset {} exceeds max_position_embeddings {}",
                        a.seq_len,
                        a.pad_token_id + 1,
                        a.max_position_embeddings));
}

void check_vit(const Checker& c, const ArchSpec& a) {
  check_transformer(c, a);
  c.positive(a.patch_size, "arch", "patch_size");
  c.positive(a.num_channels, "arch", "num_channels", kMaxChannels);
  c.positive(a.num_labels, "arch", "num_labels", kMaxVocab);
  c.positive(a.image_size, "arch", "image_size", kMaxImageSize);
  c.require(
      a.image_size > 0 && a.image_size % a.patch_size == 0,
      "arch",
      "image_size",
      fmt::format("{} is not a positive multiple of patch_size {}", a.image_size, a.patch_size));
  check_probability(c, a.attention_probs_dropout_prob, "attention_probs_dropout_prob");
}

void check_convnext(const Checker& c, const ArchSpec& a) {
  c.require(!a.depths.empty() && a.depths.size() == a.hidden_sizes.size(),
            "arch",
            "hidden_sizes",
            fmt::format("needs one entry per stage ({} depths, {} hidden_sizes)",
                        a.depths.size(),
                        a.hidden_sizes.size()));
  c.require(a.depths.size() <= kMaxStages,
            "arch",
            "depths",
            fmt::format("{} stages; at most {}", a.depths.size(), kMaxStages));
  for (size_t i = 0; i < a.depths.size(); ++i) {
    c.positive(a.depths[i], "arch", "depths", kMaxLayers);
    c.positive(a.hidden_sizes[i], "arch", "hidden_sizes");
  }
  c.positive(a.num_labels, "arch", "num_labels", kMaxVocab);
  c.positive(a.num_channels, "arch", "num_channels", kMaxChannels);
  const int64_t total_stride = int64_t{4} << (a.depths.size() - 1);  // stem 4, then 2 per stage
  c.positive(a.image_size, "arch", "image_size", kMaxImageSize);
  c.require(a.image_size > 0 && a.image_size % total_stride == 0,
            "arch",
            "image_size",
            fmt::format("must be a positive multiple of the total stride {}", total_stride));
  check_probability(c, a.drop_path_rate, "drop_path_rate");
  // HF drops the parameter at 0; the catalog's models all have it.
  c.require(a.layer_scale_init_value > 0.0,
            "arch",
            "layer_scale_init_value",
            fmt::format("must be positive (no layer scale is not supported), is {}",
                        a.layer_scale_init_value));
}

void check_mamba(const Checker& c, const ArchSpec& a) {
  c.positive(a.n_layers, "arch", "n_layers", kMaxLayers);
  c.positive(a.d_model, "arch", "d_model");
  c.positive(a.vocab_size, "arch", "vocab_size", kMaxVocab);
  c.positive(a.seq_len, "arch", "seq_len", kMaxSeqLen);
  c.positive(a.d_state, "arch", "d_state");
  c.positive(a.d_conv, "arch", "d_conv");
  c.require(a.d_conv <= a.seq_len,
            "arch",
            "d_conv",
            fmt::format("must be at most seq_len = {} (a wider kernel reads only padding), is {}",
                        a.seq_len,
                        a.d_conv));
  c.positive(a.expand, "arch", "expand");
  c.positive(a.dt_rank, "arch", "dt_rank");
  // The inner width is a width too: its products with the others must stay exact.
  c.require(
      a.expand <= kMaxWidth / a.d_model,
      "arch",
      "expand",
      fmt::format("expand x d_model = {} x {} must be at most {}", a.expand, a.d_model, kMaxWidth));
  c.require(
      a.time_step_min > 0.0 && a.time_step_min <= a.time_step_max,
      "arch",
      "time_step_min",
      fmt::format("must be in (0, time_step_max = {}], is {}", a.time_step_max, a.time_step_min));
  c.require(a.time_step_floor >= 0.0,
            "arch",
            "time_step_floor",
            fmt::format("must be >= 0, is {}", a.time_step_floor));
  c.require(a.time_step_scale > 0.0,
            "arch",
            "time_step_scale",
            fmt::format("must be positive, is {}", a.time_step_scale));
}

void check_token_id(const Checker& c, const ArchSpec& a, int64_t id, const char* field) {
  c.require(id >= 0 && id < a.vocab_size,
            "arch",
            field,
            fmt::format("{} is not in [0, vocab_size) = [0, {})", id, a.vocab_size));
}

// Grouped-query attention: key/value heads divide the query heads; the head even (rotary pairs).
void check_llama_heads(const Checker& c, const ArchSpec& a) {
  c.require(a.n_kv_heads > 0 && a.n_kv_heads <= a.n_heads && a.n_heads % a.n_kv_heads == 0,
            "arch",
            "n_kv_heads",
            fmt::format("{} does not divide n_heads {}", a.n_kv_heads, a.n_heads));
  c.require(
      a.head_dim >= 0 && a.head_dim <= kMaxWidth / a.n_heads,
      "arch",
      "head_dim",
      fmt::format(
          "must be in [0, {}] (0: d_model / n_heads), is {}", kMaxWidth / a.n_heads, a.head_dim));
  c.require(a.attention_head_dim() % 2 == 0,
            "arch",
            "head_dim",
            fmt::format("{} is odd; rotary positions rotate pairs", a.attention_head_dim()));
}

void check_llama(const Checker& c, const ArchSpec& a) {
  check_transformer(c, a);
  check_llama_heads(c, a);
  c.positive(a.vocab_size, "arch", "vocab_size", kMaxVocab);
  c.positive(a.seq_len, "arch", "seq_len", kMaxSeqLen);
  c.positive(a.max_position_embeddings, "arch", "max_position_embeddings", kMaxPositions);
  c.require(
      a.seq_len <= a.max_position_embeddings,
      "arch",
      "seq_len",
      fmt::format("{} exceeds max_position_embeddings {}", a.seq_len, a.max_position_embeddings));
  c.require(a.rotary_emb_base > 1.0,
            "arch",
            "rope_theta",
            fmt::format("must be greater than 1, is {}", a.rotary_emb_base));
  c.require(a.layer_norm_eps > 0.0 && a.layer_norm_eps < 1.0,
            "arch",
            "rms_norm_eps",
            fmt::format("must be in (0, 1), is {}", a.layer_norm_eps));
  c.require(!(a.qkv_bias && a.parameter_free_layer_norm),
            "arch",
            "attention_bias",
            "q/k/v biases (Qwen2) with a parameter-free LayerNorm (OLMo): no transformers class");
  check_token_id(c, a, a.bos_token_id, "bos_token_id");
  check_token_id(c, a, a.eos_token_id, "eos_token_id");
}

void check_arch(const Checker& c, Family family, const ArchSpec& a) {
  switch (family) {
    case Family::kGptNeox:
      check_gpt_neox(c, a);
      break;
    case Family::kRoberta:
      check_roberta(c, a);
      break;
    case Family::kVit:
      check_vit(c, a);
      break;
    case Family::kConvnext:
      check_convnext(c, a);
      break;
    case Family::kMamba:
      check_mamba(c, a);
      break;
    case Family::kLlama:
      check_llama(c, a);
      break;
  }
  c.require(a.initializer_range > 0.0,
            "arch",
            "initializer_range",
            fmt::format("must be positive, is {}", a.initializer_range));
  // The normalisation's epsilon keeps its division away from 0 (llama's, rms_norm_eps, above).
  if (family != Family::kLlama) {
    c.require(a.layer_norm_eps > 0.0 && a.layer_norm_eps < 1.0,
              "arch",
              "layer_norm_eps",
              fmt::format("must be in (0, 1), is {}", a.layer_norm_eps));
  }
}

void check_recipe(const Checker& c, const RecipeSpec& r) {
  c.positive(r.global_batch, "recipe", "global_batch", kMaxGlobalBatch);
  c.positive(r.train_steps, "recipe", "train_steps", kMaxTrainSteps);
  c.require(r.lr > 0.0, "recipe", "lr", "must be positive");
  c.require(r.min_lr >= 0.0 && r.min_lr <= r.lr, "recipe", "min_lr", "must be in [0, lr]");
  c.require(r.warmup_steps >= 0 && r.warmup_steps < r.train_steps,
            "recipe",
            "warmup_steps",
            "must be in [0, train_steps)");
  if (r.schedule == ScheduleKind::kWsd) {
    c.require(r.decay_steps > 0 && r.decay_steps <= r.train_steps - r.warmup_steps,
              "recipe",
              "decay_steps",
              "must be in [1, train_steps - warmup_steps] for schedule \"wsd\"");
  } else {
    c.require(r.decay_steps == 0, "recipe", "decay_steps", "applies to schedule \"wsd\" only");
  }
  c.require(r.beta1 >= 0.0 && r.beta1 < 1.0, "recipe", "beta1", "must be in [0, 1)");
  c.require(r.beta2 >= 0.0 && r.beta2 < 1.0, "recipe", "beta2", "must be in [0, 1)");
  // Adam's epsilon keeps its division away from 0: positive, and far below the moments' scale.
  c.require(
      r.eps > 0.0 && r.eps < 1.0, "recipe", "eps", fmt::format("must be in (0, 1), is {}", r.eps));
  c.require(r.weight_decay >= 0.0,
            "recipe",
            "weight_decay",
            fmt::format("must be >= 0 (0: none), is {}", r.weight_decay));
  c.require(r.clip_grad_norm >= 0.0, "recipe", "clip_grad_norm", "must be >= 0 (0: none)");
  c.require(r.dropout >= 0.0 && r.dropout < 1.0, "recipe", "dropout", "must be in [0, 1)");
}

}  // namespace

void validate_model(const ModelSpec& model) {
  const Checker c{model};
  c.require(!model.name.empty(), "model", "name", "must not be empty");
  check_arch(c, model.family, model.arch);
  check_recipe(c, model.recipe);
  if (family_traits(model.family).objective == Objective::kMaskedLm) {
    c.require(model.recipe.mlm_probability > 0.0 && model.recipe.mlm_probability < 1.0,
              "recipe",
              "mlm_probability",
              "masked LM needs a value in (0, 1)");
  }
  if (model.reported) {
    c.positive(model.reported->gpus, "reported", "gpus");
    // From a run of minutes to one of centuries: beyond, the GPU-days ratio means nothing.
    c.require(model.reported->days >= kMinReportedDays && model.reported->days <= kMaxReportedDays,
              "reported",
              "days",
              fmt::format("must be in [{}, {}], is {}",
                          kMinReportedDays,
                          kMaxReportedDays,
                          model.reported->days));
  }
}

}  // namespace gpudays
