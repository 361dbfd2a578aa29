// config.json -> ModelSpec: transformers 5's field names (with the 4.x GPT-NeoX rotary names as a
// fallback), the inverse of models/hf_export.cpp's hf_config_json.
#include "catalog/hf_config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "common/json_fields.h"

namespace gpudays {
namespace {

using nlohmann::json;

// The fields of one config.json, each read with the file's name in its error.
class ConfigFields {
 public:
  ConfigFields(json doc, std::string path) : doc_(std::move(doc)), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InputError(fmt::format("{}: {}: {}", path_, field, why));
  }
  bool has(const std::string& field) const {
    return doc_.contains(field) && !doc_[field].is_null();
  }
  const json& at(const std::string& field) const {
    if (!has(field)) fail(field, "missing (a config.json of transformers' save_pretrained has it)");
    return doc_[field];
  }
  int64_t get_int(const std::string& field) const {
    const std::optional<int64_t> v = json_int64(at(field));
    if (!v) fail(field, "not an integer of 64 bits");
    return *v;
  }
  int64_t get_int_or(const std::string& field, int64_t fallback) const {
    return has(field) ? get_int(field) : fallback;
  }
  double get_double(const std::string& field) const {
    const json& v = at(field);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(field, "not a finite number");
    return v.get<double>();
  }
  double get_double_or(const std::string& field, double fallback) const {
    return has(field) ? get_double(field) : fallback;
  }
  bool get_bool_or(const std::string& field, bool fallback) const {
    if (!has(field)) return fallback;
    if (!doc_[field].is_boolean()) fail(field, "not true or false");
    return doc_[field].get<bool>();
  }
  std::vector<int64_t> get_int_array(const std::string& field) const {
    const json& v = at(field);
    if (!v.is_array()) fail(field, "not an array of integers");
    std::vector<int64_t> values;
    for (const json& x : v) {
      const std::optional<int64_t> value = json_int64(x);
      if (!value) fail(field, "not an array of integers of 64 bits");
      values.push_back(*value);
    }
    return values;
  }
  std::string get_string_or(const std::string& field, const std::string& fallback) const {
    if (!has(field)) return fallback;
    if (!doc_[field].is_string()) fail(field, "not a string");
    return doc_[field].get<std::string>();
  }
  // Classes: num_labels, or (as save_pretrained writes it) the size of id2label.
  int64_t num_labels() const {
    if (has("num_labels")) return get_int("num_labels");
    const json& labels = at("id2label");
    if (!labels.is_object() || labels.empty()) fail("id2label", "not an object of class names");
    return static_cast<int64_t>(labels.size());
  }

 private:
  json doc_;
  std::string path_;
};

void read_transformer(const ConfigFields& c, ArchSpec& a) {
  a.n_layers = c.get_int("num_hidden_layers");
  a.d_model = c.get_int("hidden_size");
  a.n_heads = c.get_int("num_attention_heads");
  a.d_ffn = c.get_int("intermediate_size");
  a.layer_norm_eps = c.get_double_or("layer_norm_eps", 1e-12);
  a.initializer_range = c.get_double_or("initializer_range", 0.02);
}

// Sequence length: the position table (a config.json records no training length).
void read_gpt_neox(const ConfigFields& c, ArchSpec& a) {
  read_transformer(c, a);
  a.layer_norm_eps = c.get_double_or("layer_norm_eps", 1e-5);
  a.vocab_size = c.get_int("vocab_size");
  a.max_position_embeddings = c.get_int("max_position_embeddings");
  a.seq_len = a.max_position_embeddings;
  if (c.has("rope_parameters")) {  // transformers 5
    const ConfigFields rope(c.at("rope_parameters"), "config.json rope_parameters");
    a.rotary_pct = rope.get_double_or("partial_rotary_factor", 0.25);
    a.rotary_emb_base = rope.get_double_or("rope_theta", 10000.0);
  } else {  // transformers 4
    a.rotary_pct = c.get_double_or("rotary_pct", 0.25);
    a.rotary_emb_base = c.get_double_or("rotary_emb_base", 10000.0);
  }
  a.use_parallel_residual = c.get_bool_or("use_parallel_residual", true);
  a.tie_word_embeddings = c.get_bool_or("tie_word_embeddings", false);
}

// Sequence length: the position table less the padding offset (pad_token_id + 1), 512 of
// roberta-large's 514.
void read_roberta(const ConfigFields& c, ArchSpec& a) {
  read_transformer(c, a);
  a.vocab_size = c.get_int("vocab_size");
  a.max_position_embeddings = c.get_int("max_position_embeddings");
  a.type_vocab_size = c.get_int_or("type_vocab_size", 1);
  a.pad_token_id = c.get_int_or("pad_token_id", 1);
  a.bos_token_id = c.get_int_or("bos_token_id", 0);
  a.eos_token_id = c.get_int_or("eos_token_id", 2);
  a.seq_len = a.max_position_embeddings - a.pad_token_id - 1;
}

void read_vit(const ConfigFields& c, ArchSpec& a) {
  read_transformer(c, a);
  a.image_size = c.get_int("image_size");
  a.patch_size = c.get_int("patch_size");
  a.num_channels = c.get_int_or("num_channels", 3);
  a.num_labels = c.num_labels();
  a.attention_probs_dropout_prob = c.get_double_or("attention_probs_dropout_prob", 0.0);
}

void read_convnext(const ConfigFields& c, ArchSpec& a) {
  a.depths = c.get_int_array("depths");
  a.hidden_sizes = c.get_int_array("hidden_sizes");
  a.image_size = c.get_int("image_size");
  a.num_channels = c.get_int_or("num_channels", 3);
  a.num_labels = c.num_labels();
  a.layer_norm_eps = c.get_double_or("layer_norm_eps", 1e-12);
  a.drop_path_rate = c.get_double_or("drop_path_rate", 0.0);
  a.layer_scale_init_value = c.get_double_or("layer_scale_init_value", 1e-6);
  a.initializer_range = c.get_double_or("initializer_range", 0.02);
}

// Sequence length: the recipe model's (set by the caller).
void read_mamba(const ConfigFields& c, ArchSpec& a) {
  a.n_layers = c.get_int("num_hidden_layers");
  a.d_model = c.get_int("hidden_size");
  a.vocab_size = c.get_int("vocab_size");
  a.d_state = c.get_int("state_size");
  a.d_conv = c.get_int("conv_kernel");
  a.expand = c.get_int("expand");
  a.dt_rank = c.get_int("time_step_rank");
  a.conv_bias = c.get_bool_or("use_conv_bias", true);
  a.proj_bias = c.get_bool_or("use_bias", false);
  a.layer_norm_eps = c.get_double_or("layer_norm_epsilon", 1e-5);
  a.time_step_min = c.get_double_or("time_step_min", 0.001);
  a.time_step_max = c.get_double_or("time_step_max", 0.1);
  a.time_step_floor = c.get_double_or("time_step_floor", 1e-4);
  a.time_step_scale = c.get_double_or("time_step_scale", 1.0);
  a.initializer_range = c.get_double_or("initializer_range", 0.1);
}

Family family_of(const ConfigFields& c) {
  const std::string type = c.get_string_or("model_type", "");
  if (type.empty()) c.fail("model_type", "missing; not a transformers config.json");
  for (Family f :
       {Family::kGptNeox, Family::kRoberta, Family::kVit, Family::kConvnext, Family::kMamba}) {
    if (type == to_string(f)) return f;
  }
  c.fail(
      "model_type",
      fmt::format("'{}' is not supported; valid: gpt_neox, roberta, vit, convnext, mamba", type));
}

// The catalog model of the family nearest to `model` in parameter count.
const ModelSpec& recipe_model(const ModelSpec& model, const std::vector<ModelSpec>& catalog) {
  const ModelSpec* nearest = nullptr;
  int64_t nearest_gap = std::numeric_limits<int64_t>::max();
  const int64_t params = count_params(model).total;
  for (const ModelSpec& m : catalog) {
    if (m.family != model.family) continue;
    const int64_t gap = std::llabs(count_params(m).total - params);
    if (gap < nearest_gap) nearest = &m, nearest_gap = gap;
  }
  return *nearest;  // the caller checked that the family has one
}

// Takes the recipe (and Mamba's sequence length) of `source`.
void take_recipe(ModelSpec& m, const ModelSpec& source) {
  m.recipe = source.recipe;
  if (m.family == Family::kMamba) m.arch.seq_len = source.arch.seq_len;
}

json parse_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read model file {}", path));
  try {
    json doc = json::parse(in);
    if (!doc.is_object()) throw InputError(fmt::format("{}: not a JSON object", path));
    return doc;
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON (byte {})", path, e.byte));
  } catch (const json::out_of_range& e) {  // a number past a double's range, such as 1e400
    throw InputError(fmt::format("{}: a number out of range ({})", path, e.what()));
  }
}

// The model's name: the hub id it was saved from, else its folder's name.
std::string name_of(const ConfigFields& c, const std::string& path) {
  const std::string id = c.get_string_or("_name_or_path", "");
  if (!id.empty()) return id;
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  return folder.filename().empty() ? "config" : folder.filename().string();
}

}  // namespace

bool is_hf_config_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

ModelSpec load_hf_config(const std::string& path, const std::vector<ModelSpec>& catalog) {
  const ConfigFields c(parse_json(path), path);
  ModelSpec m;
  m.source_path = path;
  m.family = family_of(c);
  m.name = name_of(c, path);
  m.hf_name = c.get_string_or("_name_or_path", "");
  switch (m.family) {
    case Family::kGptNeox:
      read_gpt_neox(c, m.arch);
      break;
    case Family::kRoberta:
      read_roberta(c, m.arch);
      break;
    case Family::kVit:
      read_vit(c, m.arch);
      break;
    case Family::kConvnext:
      read_convnext(c, m.arch);
      break;
    case Family::kMamba:
      read_mamba(c, m.arch);
      break;
  }
  const auto first = std::find_if(
      catalog.begin(), catalog.end(), [&](const ModelSpec& s) { return s.family == m.family; });
  if (first == catalog.end()) {
    throw InputError(fmt::format(
        "{}: the catalog has no {} model to take the recipe from", path, to_string(m.family)));
  }
  take_recipe(m, *first);  // for the checks; the nearest model's below
  validate_model(m);       // first: the sizes below are then bounded
  if (m.family == Family::kVit) {
    const int64_t side = m.arch.image_size / m.arch.patch_size;
    m.arch.seq_len = side * side + 1;
  }
  take_recipe(m, recipe_model(m, catalog));
  return m;
}

}  // namespace gpudays
