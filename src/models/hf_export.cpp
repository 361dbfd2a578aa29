// config.json writers per family, from the catalog's ArchSpec; field names and defaults as in
// transformers' configuration_<family>.py (5.x), with the legacy names 4.x reads where they differ.
#include "models/hf_export.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/output_files.h"
#include "models/convnext.h"
#include "models/gpt_neox.h"
#include "models/layers.h"
#include "models/mamba.h"
#include "models/roberta.h"
#include "models/vit.h"

namespace gpudays::models {
namespace {

// The fields every transformer family's config shares, added to `fields`.
nlohmann::json with_transformer_fields(const ArchSpec& a, nlohmann::json fields) {
  fields.update({{"hidden_size", a.d_model},
                 {"num_hidden_layers", a.n_layers},
                 {"num_attention_heads", a.n_heads},
                 {"intermediate_size", a.d_ffn},
                 {"hidden_act", "gelu"},
                 {"initializer_range", a.initializer_range},
                 {"layer_norm_eps", a.layer_norm_eps},
                 {"dtype", "float32"}});
  return fields;
}

nlohmann::json gpt_neox_config(const ModelSpec& spec) {
  const ArchSpec& a = spec.arch;
  return with_transformer_fields(
      a,
      {
          {"architectures", {"GPTNeoXForCausalLM"}},
          {"model_type", "gpt_neox"},
          {"vocab_size", a.vocab_size},
          {"max_position_embeddings", a.max_position_embeddings},
          {"rotary_pct", a.rotary_pct},            // transformers 4.x
          {"rotary_emb_base", a.rotary_emb_base},  // transformers 4.x
          {"rope_parameters",                      // transformers 5.x
           {{"rope_type", "default"},
            {"rope_theta", a.rotary_emb_base},
            {"partial_rotary_factor", a.rotary_pct}}},
          {"use_parallel_residual", a.use_parallel_residual},
          {"tie_word_embeddings", a.tie_word_embeddings},
          {"attention_bias", true},
          {"hidden_dropout", spec.recipe.dropout},
          {"attention_dropout", 0.0},
          {"bos_token_id", 0},  // Pythia's tokenizer: <|endoftext|> = 0 for both
          {"eos_token_id", 0},
          {"use_cache", true},
      });
}

nlohmann::json roberta_config(const ModelSpec& spec) {
  const ArchSpec& a = spec.arch;
  return with_transformer_fields(a,
                                 {
                                     {"architectures", {"RobertaForMaskedLM"}},
                                     {"model_type", "roberta"},
                                     {"vocab_size", a.vocab_size},
                                     {"hidden_dropout_prob", spec.recipe.dropout},
                                     {"attention_probs_dropout_prob", spec.recipe.dropout},
                                     {"max_position_embeddings", a.max_position_embeddings},
                                     {"type_vocab_size", a.type_vocab_size},
                                     {"pad_token_id", a.pad_token_id},
                                     {"bos_token_id", a.bos_token_id},
                                     {"eos_token_id", a.eos_token_id},
                                     {"tie_word_embeddings", true},
                                 });
}

// ViTForImageClassification; encoder_stride (masked image modelling only) as the patch size.
nlohmann::json vit_config(const ModelSpec& spec) {
  const ArchSpec& a = spec.arch;
  const VitOptions o = vit_options(spec, {});
  return with_transformer_fields(a,
                                 {
                                     {"architectures", {"ViTForImageClassification"}},
                                     {"model_type", "vit"},
                                     {"hidden_dropout_prob", o.hidden_dropout},
                                     {"attention_probs_dropout_prob", o.attention_dropout},
                                     {"image_size", a.image_size},
                                     {"patch_size", a.patch_size},
                                     {"num_channels", a.num_channels},
                                     {"num_labels", a.num_labels},
                                     {"qkv_bias", true},
                                     {"encoder_stride", a.patch_size},
                                 });
}

// ConvNextForImageClassification; inner LayerNorm epsilons are fixed in transformers' code.
nlohmann::json convnext_config(const ModelSpec& spec) {
  const ArchSpec& a = spec.arch;
  return {
      {"architectures", {"ConvNextForImageClassification"}},
      {"model_type", "convnext"},
      {"num_channels", a.num_channels},
      {"patch_size", kConvnextPatchSize},
      {"num_stages", a.depths.size()},
      {"depths", a.depths},
      {"hidden_sizes", a.hidden_sizes},
      {"hidden_act", "gelu"},
      {"image_size", a.image_size},
      {"num_labels", a.num_labels},
      {"layer_norm_eps", a.layer_norm_eps},
      {"layer_scale_init_value", a.layer_scale_init_value},
      {"drop_path_rate", a.drop_path_rate},
      {"initializer_range", a.initializer_range},
      {"dtype", "float32"},
  };
}

// MambaForCausalLM.
nlohmann::json mamba_config(const ModelSpec& spec) {
  const ArchSpec& a = spec.arch;
  return {
      {"architectures", {"MambaForCausalLM"}},
      {"model_type", "mamba"},
      {"vocab_size", a.vocab_size},
      {"hidden_size", a.d_model},
      {"num_hidden_layers", a.n_layers},
      {"state_size", a.d_state},
      {"conv_kernel", a.d_conv},
      {"expand", a.expand},
      {"intermediate_size", a.expand * a.d_model},
      {"time_step_rank", a.dt_rank},
      {"use_conv_bias", a.conv_bias},
      {"use_bias", a.proj_bias},
      {"hidden_act", "silu"},
      {"layer_norm_epsilon", a.layer_norm_eps},
      {"residual_in_fp32", true},
      {"rescale_prenorm_residual", false},
      {"initializer_range", a.initializer_range},
      {"time_step_init_scheme", "random"},
      {"time_step_min", a.time_step_min},
      {"time_step_max", a.time_step_max},
      {"time_step_floor", a.time_step_floor},
      {"time_step_scale", a.time_step_scale},
      {"tie_word_embeddings", true},
      {"bos_token_id", 0},  // GPT-NeoX tokenizer, as Pythia: <|endoftext|> = 0
      {"eos_token_id", 0},
      {"pad_token_id", 0},
      {"use_cache", true},
      {"dtype", "float32"},
  };
}

}  // namespace

nlohmann::json hf_config_json(const ModelSpec& spec) {
  switch (spec.family) {
    case Family::kGptNeox:
      return gpt_neox_config(spec);
    case Family::kRoberta:
      return roberta_config(spec);
    case Family::kVit:
      return vit_config(spec);
    case Family::kConvnext:
      return convnext_config(spec);
    case Family::kMamba:
      return mamba_config(spec);
    default:
      throw InputError(fmt::format("model '{}': no HuggingFace export for family {} yet",
                                   spec.name,
                                   to_string(spec.family)));
  }
}

LoadOptions hf_load_options(Family family) {
  LoadOptions options;
  switch (family) {
    case Family::kGptNeox:
      options.aliases["lm_head.weight"] = "embed_out.weight";
      break;
    case Family::kRoberta:
      // Hub checkpoints (roberta-large) still hold the tied decoder, the pooler of RobertaModel
      // and the old position_ids buffer.
      options.ignored = {"lm_head.decoder.weight",
                         "lm_head.decoder.bias",
                         "roberta.pooler.dense.weight",
                         "roberta.pooler.dense.bias",
                         "roberta.embeddings.position_ids"};
      break;
    case Family::kMamba:
      // The original mamba_ssm checkpoints say "embedding" (HF MambaModel.load_hook renames it).
      options.aliases["backbone.embedding.weight"] = "backbone.embeddings.weight";
      break;
    default:
      break;
  }
  return options;
}

void save_pretrained(const torch::nn::Module& module,
                     const ModelSpec& spec,
                     const std::string& dir) {
  const nlohmann::json config = hf_config_json(spec);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("cannot create {}: {}", dir, ec.message()));
  save_safetensors(module, (std::filesystem::path(dir) / "model.safetensors").string());
  const std::string config_path = (std::filesystem::path(dir) / "config.json").string();
  write_file_atomically(config_path, config.dump(2) + "\n");  // IoError when it fails
}

}  // namespace gpudays::models
