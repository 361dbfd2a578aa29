// The llama family's row of the family table: the Llama-style decoder (RMSNorm, SwiGLU MLP,
// grouped-query attention, rotary positions over the whole head, no biases), and the two
// transformers classes with the same maths but for one detail: Qwen2 (biases on q, k and v) and
// OLMo (a LayerNorm without weight or bias, eps 1e-5, in place of RMSNorm). Keys and defaults are
// transformers 5.24's (models/{llama,qwen2,olmo}/configuration_*.py).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/family_traits.h"
#include "common/error.h"
#include "common/json_text.h"

namespace gpudays {
namespace {

using A = ArchSpec;
using nlohmann::json;
constexpr bool kMeasured = true;
constexpr size_t kLlama = 0, kQwen2 = 1, kOlmo = 2;  // rows of FamilyTraits::hf
constexpr double kOlmoLayerNormEps = 1e-5;           // fixed in OlmoLayerNorm.forward

[[noreturn]] void refuse(const std::string& path,
                         const std::string& field,
                         const std::string& why) {
  throw InputError(fmt::format("{}: {}: {}", path, field, why));
}

bool is_true(const json& config, const char* field) {
  return config.contains(field) && config[field].is_boolean() && config[field].get<bool>();
}

bool is_set(const json& config, const char* field) {
  return config.contains(field) && !config[field].is_null();
}

// Rotary positions as transformers' "default" rope_type over the whole head; no scaling.
void check_rope(const json& config, const std::string& path) {
  if (is_set(config, "rope_scaling")) {
    refuse(path, "rope_scaling", "rope scaling is not implemented (only plain rotary positions)");
  }
  if (!is_set(config, "rope_parameters")) return;
  const json& rope = config["rope_parameters"];
  if (!rope.is_object()) refuse(path, "rope_parameters", "not an object");
  const json type = rope.value("rope_type", json("default"));
  if (type != "default") {
    refuse(
        path,
        "rope_parameters.rope_type",
        fmt::format("{} is not implemented (only \"default\" rotary positions)", json_text(type)));
  }
  const json factor = rope.value("partial_rotary_factor", json(1.0));
  if (!factor.is_number() || factor.get<double>() != 1.0) {
    refuse(path,
           "rope_parameters.partial_rotary_factor",
           fmt::format("{}: the family rotates the whole head", json_text(factor)));
  }
}

void check_common(const json& config, const std::string& path) {
  check_rope(config, path);
  const json act = config.value("hidden_act", json("silu"));
  if (act != "silu") {
    refuse(
        path, "hidden_act", fmt::format("{}: the family's MLP is SwiGLU (silu)", json_text(act)));
  }
}

void check_qwen2(const json& config, const std::string& path) {
  if (is_true(config, "use_sliding_window")) {
    refuse(path, "use_sliding_window", "sliding-window attention is not implemented");
  }
  if (config.contains("layer_types") && config["layer_types"].is_array()) {
    for (const json& type : config["layer_types"]) {
      if (type != "full_attention") {
        refuse(path, "layer_types", fmt::format("{} layers are not implemented", json_text(type)));
      }
    }
  }
}

void read_variant(size_t variant, const json& config, const std::string& path, ArchSpec& a) {
  check_common(config, path);
  // transformers writes head_dim always; ours is 0 where it is d_model / n_heads.
  if (a.n_heads > 0 && a.head_dim * a.n_heads == a.d_model) a.head_dim = 0;
  if (variant == kQwen2) {
    check_qwen2(config, path);
    a.qkv_bias = true;
    return;
  }
  if (is_true(config, "attention_bias")) {
    refuse(path,
           "attention_bias",
           "biases on q, k, v and o are not in the family (Qwen2's on q, k and v are)");
  }
  if (variant == kLlama && is_true(config, "mlp_bias")) {
    refuse(path, "mlp_bias", "MLP biases are not in the family");
  }
  if (variant == kOlmo) {
    if (is_set(config, "clip_qkv")) refuse(path, "clip_qkv", "q, k, v clipping is not implemented");
    a.parameter_free_layer_norm = true;
    a.layer_norm_eps = kOlmoLayerNormEps;
  }
}

size_t variant_of(const ArchSpec& a) {
  if (a.qkv_bias) return kQwen2;
  return a.parameter_free_layer_norm ? kOlmo : kLlama;
}

// The constant fields of config.json (head_dim always: a zero would be read as zero; no padding
// id, as the engine's embedding has no padding row, which transformers would freeze).
void llama_extras(const ModelSpec& m, json& config) {
  config.update({{"hidden_act", "silu"},
                 {"head_dim", m.arch.attention_head_dim()},
                 {"attention_dropout", m.recipe.dropout},
                 {"use_cache", true},
                 {"pad_token_id", nullptr},
                 {"dtype", "float32"}});
  config["rope_parameters"]["rope_type"] = "default";
  const size_t variant = variant_of(m.arch);
  if (variant == kQwen2) config["use_sliding_window"] = false;
  if (variant != kQwen2) config["attention_bias"] = false;
  if (variant == kLlama) config["mlp_bias"] = false;
  if (variant == kOlmo) {
    config.erase("rms_norm_eps");  // OLMo's is fixed
    config["clip_qkv"] = nullptr;
  }
}

std::vector<ArchKey> llama_keys() {
  return {
      {&A::n_layers, "n_layers", "num_hidden_layers", kRequired, kRequired, kMeasured},
      {&A::d_model, "d_model", "hidden_size", kRequired, kRequired, kMeasured},
      {&A::n_heads, "n_heads", "num_attention_heads", kRequired, kRequired, kMeasured},
      {&A::n_kv_heads,
       "n_kv_heads",
       "num_key_value_heads",
       or_field(&A::n_heads),
       or_field(&A::n_heads),
       kMeasured},
      {&A::d_ffn, "d_ffn", "intermediate_size", kRequired, kRequired, kMeasured},
      {&A::head_dim, "head_dim", "head_dim", or_value(0), or_value(0)},
      {&A::vocab_size, "vocab_size", "vocab_size", kRequired, kRequired, kMeasured},
      {&A::seq_len, "seq_len", "", kRequired, kRequired, kMeasured},
      {&A::max_position_embeddings,
       "max_position_embeddings",
       "max_position_embeddings",
       or_field(&A::seq_len),
       kRequired},
      {&A::rotary_emb_base,
       "rope_theta",
       "rope_parameters.rope_theta",
       or_value(10000.0),
       or_value(10000.0),
       /*measured=*/false,
       /*hf_legacy=*/"rope_theta"},
      {&A::layer_norm_eps, "rms_norm_eps", "rms_norm_eps", or_value(1e-6), or_value(1e-6)},
      {&A::tie_word_embeddings,
       "tie_word_embeddings",
       "tie_word_embeddings",
       or_value(false),
       or_value(false),
       kMeasured},
      {&A::qkv_bias, "attention_bias", "", or_value(false), or_value(false)},
      {&A::parameter_free_layer_norm,
       "parameter_free_layer_norm",
       "",
       or_value(false),
       or_value(false)},
      {&A::bos_token_id, "bos_token_id", "bos_token_id", or_value(1), or_value(1)},
      {&A::eos_token_id, "eos_token_id", "eos_token_id", or_value(2), or_value(2)},
      {&A::initializer_range,
       "initializer_range",
       "initializer_range",
       or_value(0.02),
       or_value(0.02)},
      // Constants of the family: a SwiGLU MLP, rotary positions over the whole head.
      {&A::gated_ffn, "", "", or_value(true), or_value(true)},
      {&A::rotary_pct, "", "", or_value(1.0), or_value(1.0)},
  };
}

}  // namespace

FamilyTraits llama_family() {
  return {
      .family = Family::kLlama,
      .name = "llama",
      .hf = {{"llama", "LlamaForCausalLM", "LlamaDecoderLayer"},
             {"qwen2", "Qwen2ForCausalLM", "Qwen2DecoderLayer"},
             {"olmo", "OlmoForCausalLM", "OlmoDecoderLayer"}},
      .hf_gradient_checkpointing = true,
      .modality = Modality::kText,
      .objective = Objective::kCausalLm,
      .attention = true,
      .seq_len_rule = SeqLenRule::kPositions,
      .keys = llama_keys(),
      .hf_extras = llama_extras,
      .hf_variant_of = variant_of,
      .hf_read = read_variant,
  };
}

}  // namespace gpudays
