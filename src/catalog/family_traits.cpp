// The family table. Key defaults are transformers' (configuration_<family>.py, 5.x); the model
// TOML defaults differ from config.json's only where our files always used their own.
#include "catalog/family_traits.h"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpudays {
namespace {

using A = ArchSpec;
using nlohmann::json;
constexpr bool kMeasured = true;

// n_layers, d_model, n_heads, d_ffn and layer_norm_eps (config.json default `hf_eps`).
std::vector<ArchKey> transformer_keys(double hf_eps) {
  return {
      {&A::n_layers, "n_layers", "num_hidden_layers", kRequired, kRequired, kMeasured},
      {&A::d_model, "d_model", "hidden_size", kRequired, kRequired, kMeasured},
      {&A::n_heads, "n_heads", "num_attention_heads", kRequired, kRequired, kMeasured},
      {&A::d_ffn, "d_ffn", "intermediate_size", kRequired, kRequired, kMeasured},
      {&A::layer_norm_eps, "layer_norm_eps", "layer_norm_eps", or_value(1e-5), or_value(hf_eps)},
  };
}

// A key of the same name and default in both files.
ArchKey same(ArchMember member, std::string_view key, KeyDefault fallback, bool measured = false) {
  return {member, key, key, fallback, fallback, measured};
}

std::vector<ArchKey> with(std::vector<ArchKey> keys, const std::vector<ArchKey>& more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

ArchKey initializer_range(double fallback) {
  return same(&A::initializer_range, "initializer_range", or_value(fallback));
}

// The transformer fields of config.json our ArchSpec does not hold.
void transformer_extras(json& config) {
  config.update({{"hidden_act", "gelu"}, {"dtype", "float32"}});
}

void gpt_neox_extras(const ModelSpec& m, json& config) {
  transformer_extras(config);
  config["rope_parameters"]["rope_type"] = "default";
  config.update({{"attention_bias", true},
                 {"hidden_dropout", m.recipe.dropout},
                 {"attention_dropout", 0.0},
                 {"bos_token_id", 0},  // Pythia's tokenizer: <|endoftext|> = 0 for both
                 {"eos_token_id", 0},
                 {"use_cache", true}});
}

void roberta_extras(const ModelSpec& m, json& config) {
  transformer_extras(config);
  config.update({{"hidden_dropout_prob", m.recipe.dropout},
                 {"attention_probs_dropout_prob", m.recipe.dropout},
                 {"tie_word_embeddings", true}});
}

// encoder_stride (masked image modelling only) as the patch size.
void vit_extras(const ModelSpec& m, json& config) {
  transformer_extras(config);
  config.update({{"hidden_dropout_prob", m.recipe.dropout},
                 {"qkv_bias", true},
                 {"encoder_stride", m.arch.patch_size}});
}

// The stem's patch size is fixed (models/convnext.h kConvnextPatchSize); inner LayerNorm
// epsilons are fixed in transformers' code.
void convnext_extras(const ModelSpec& m, json& config) {
  config.update({{"patch_size", 4},
                 {"num_stages", m.arch.depths.size()},
                 {"hidden_act", "gelu"},
                 {"dtype", "float32"}});
}

void mamba_extras(const ModelSpec& m, json& config) {
  config.update({{"intermediate_size", m.arch.expand * m.arch.d_model},
                 {"hidden_act", "silu"},
                 {"residual_in_fp32", true},
                 {"rescale_prenorm_residual", false},
                 {"time_step_init_scheme", "random"},
                 {"tie_word_embeddings", true},
                 {"bos_token_id", 0},  // GPT-NeoX tokenizer, as Pythia: <|endoftext|> = 0
                 {"eos_token_id", 0},
                 {"pad_token_id", 0},
                 {"use_cache", true},
                 {"dtype", "float32"}});
}

FamilyTraits gpt_neox() {
  return {
      .family = Family::kGptNeox,
      .name = "gpt_neox",
      .hf = {{"gpt_neox", "GPTNeoXForCausalLM", "GPTNeoXLayer"}},
      .hf_gradient_checkpointing = true,
      .modality = Modality::kText,
      .objective = Objective::kCausalLm,
      .attention = true,
      .seq_len_rule = SeqLenRule::kPositions,
      .keys =
          with(transformer_keys(1e-5),
               {
                   same(&A::vocab_size, "vocab_size", kRequired, kMeasured),
                   {&A::seq_len, "seq_len", "", kRequired, kRequired, kMeasured},
                   {&A::rotary_pct,
                    "rotary_pct",
                    "rope_parameters.partial_rotary_factor",
                    kRequired,
                    or_value(0.25),
                    /*measured=*/false,
                    /*hf_legacy=*/"rotary_pct"},
                   {&A::rotary_emb_base,
                    "rotary_emb_base",
                    "rope_parameters.rope_theta",
                    or_value(10000.0),
                    or_value(10000.0),
                    /*measured=*/false,
                    /*hf_legacy=*/"rotary_emb_base"},
                   {&A::max_position_embeddings,
                    "max_position_embeddings",
                    "max_position_embeddings",
                    or_field(&A::seq_len),
                    kRequired},
                   same(&A::tie_word_embeddings, "tie_word_embeddings", or_value(false), kMeasured),
                   same(&A::use_parallel_residual, "use_parallel_residual", or_value(true)),
                   initializer_range(0.02),
               }),
      .hf_extras = gpt_neox_extras,
  };
}

FamilyTraits roberta() {
  return {
      .family = Family::kRoberta,
      .name = "roberta",
      .hf = {{"roberta", "RobertaForMaskedLM", "RobertaLayer"}},
      .hf_gradient_checkpointing = true,
      .modality = Modality::kText,
      .objective = Objective::kMaskedLm,
      .attention = true,
      .seq_len_rule = SeqLenRule::kPositionsLessPadding,
      .keys = with(transformer_keys(1e-12),
                   {
                       same(&A::vocab_size, "vocab_size", kRequired, kMeasured),
                       {&A::seq_len, "seq_len", "", kRequired, kRequired, kMeasured},
                       same(&A::max_position_embeddings, "max_position_embeddings", kRequired),
                       same(&A::type_vocab_size, "type_vocab_size", or_value(1), kMeasured),
                       same(&A::pad_token_id, "pad_token_id", or_value(1)),
                       same(&A::bos_token_id, "bos_token_id", or_value(0)),
                       same(&A::eos_token_id, "eos_token_id", or_value(2)),
                       initializer_range(0.02),
                   }),
      .hf_extras = roberta_extras,
  };
}

std::vector<ArchKey> image_keys() {
  return {
      same(&A::image_size, "image_size", kRequired, kMeasured),
      same(&A::num_channels, "num_channels", or_value(3), kMeasured),
      same(&A::num_labels, "num_labels", kRequired, kMeasured),
  };
}

FamilyTraits vit() {
  return {
      .family = Family::kVit,
      .name = "vit",
      .hf = {{"vit", "ViTForImageClassification", "ViTLayer"}},
      .hf_gradient_checkpointing = true,
      .modality = Modality::kImage,
      .objective = Objective::kClassification,
      .attention = true,
      .seq_len_rule = SeqLenRule::kPatches,
      .keys = with(
          with(transformer_keys(1e-12), image_keys()),
          {
              same(&A::patch_size, "patch_size", kRequired, kMeasured),
              {&A::seq_len, "seq_len", "", or_value(0), or_value(0)},
              same(&A::attention_probs_dropout_prob, "attention_probs_dropout_prob", or_value(0.0)),
              initializer_range(0.02),
          }),
      .hf_extras = vit_extras,
  };
}

FamilyTraits convnext() {
  return {
      .family = Family::kConvnext,
      .name = "convnext",
      // The FSDP unit is one block rather than ConvNextStage (_no_split_modules[0]), whose third
      // stage holds 27 of ConvNeXt-L's 36 blocks and so most of its parameters in one unit.
      .hf = {{"convnext", "ConvNextForImageClassification", "ConvNextLayer"}},
      .hf_gradient_checkpointing = false,
      .modality = Modality::kImage,
      .objective = Objective::kClassification,
      .attention = false,
      .seq_len_rule = SeqLenRule::kGiven,
      .keys = with(
          {
              same(&A::depths, "depths", kRequired, kMeasured),
              same(&A::hidden_sizes, "hidden_sizes", kRequired, kMeasured),
          },
          with(image_keys(),
               {
                   same(&A::layer_norm_eps, "layer_norm_eps", or_value(1e-12)),
                   same(&A::drop_path_rate, "drop_path_rate", or_value(0.0)),
                   same(&A::layer_scale_init_value, "layer_scale_init_value", or_value(1e-6)),
                   initializer_range(0.02),
               })),
      .hf_extras = convnext_extras,
  };
}

FamilyTraits mamba() {
  return {
      .family = Family::kMamba,
      .name = "mamba",
      .hf = {{"mamba", "MambaForCausalLM", "MambaBlock"}},
      .hf_gradient_checkpointing = true,
      .modality = Modality::kText,
      .objective = Objective::kCausalLm,
      .attention = false,
      .seq_len_rule = SeqLenRule::kRecipeModel,
      .keys =
          {
              {&A::n_layers, "n_layers", "num_hidden_layers", kRequired, kRequired, kMeasured},
              {&A::d_model, "d_model", "hidden_size", kRequired, kRequired, kMeasured},
              same(&A::vocab_size, "vocab_size", kRequired, kMeasured),
              {&A::seq_len, "seq_len", "", kRequired, kRequired, kMeasured},
              {&A::d_state, "d_state", "state_size", kRequired, kRequired, kMeasured},
              {&A::d_conv, "d_conv", "conv_kernel", kRequired, kRequired, kMeasured},
              same(&A::expand, "expand", kRequired, kMeasured),
              {&A::dt_rank, "dt_rank", "time_step_rank", kRequired, kRequired, kMeasured},
              {&A::conv_bias, "conv_bias", "use_conv_bias", or_value(true), or_value(true)},
              {&A::proj_bias, "proj_bias", "use_bias", or_value(false), or_value(false)},
              {&A::layer_norm_eps,
               "layer_norm_eps",
               "layer_norm_epsilon",
               or_value(1e-5),
               or_value(1e-5)},
              same(&A::time_step_min, "time_step_min", or_value(0.001)),
              same(&A::time_step_max, "time_step_max", or_value(0.1)),
              same(&A::time_step_floor, "time_step_floor", or_value(1e-4)),
              same(&A::time_step_scale, "time_step_scale", or_value(1.0)),
              initializer_range(0.1),
          },
      .hf_extras = mamba_extras,
  };
}

}  // namespace

const std::vector<FamilyTraits>& all_family_traits() {
  static const std::vector<FamilyTraits> table = {
      gpt_neox(), roberta(), vit(), convnext(), mamba(), llama_family()};
  return table;
}

const HfVariant& hf_variant(const ModelSpec& model) {
  const FamilyTraits& t = family_traits(model.family);
  return t.hf.at(t.hf_variant_of != nullptr ? t.hf_variant_of(model.arch) : 0);
}

const FamilyTraits& family_traits(Family family) {
  for (const FamilyTraits& t : all_family_traits()) {
    if (t.family == family) return t;
  }
  throw std::logic_error(
      fmt::format("family {} has no row in the family table", static_cast<int>(family)));
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const FamilyTraits& t : all_family_traits()) names.emplace_back(t.name);
  return names;
}

bool is_transformer_lm(Family family) {
  const FamilyTraits& t = family_traits(family);
  return t.attention && t.modality == Modality::kText;
}

int64_t patch_seq_len(const ArchSpec& arch) {
  const int64_t side = arch.patch_size > 0 ? arch.image_size / arch.patch_size : 0;
  return side * side + 1;
}

}  // namespace gpudays
