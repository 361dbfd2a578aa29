// config.json -> ModelSpec through the family key map (family_traits.cpp): transformers 5's field
// names, with the 4.x GPT-NeoX rotary names as a fallback; the inverse of hf_config_writer.cpp.
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

#include "catalog/arch_fields.h"
#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "catalog/toml_fields.h"
#include "common/error.h"
#include "common/input_files.h"
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

// One key of the map: "a.b" inside object a when the file has it, else the 4.x name.
void read_key(const ConfigFields& c, const ArchKey& key, ArchSpec& a) {
  if (key.hf == "num_labels") {
    a.num_labels = c.num_labels();
    return;
  }
  const size_t dot = key.hf.find('.');
  if (dot == std::string_view::npos) {
    read_arch_field(c, key.hf, key.hf_default, key.member, a);
    return;
  }
  const std::string object(key.hf.substr(0, dot));
  if (c.has(object)) {  // transformers 5
    const ConfigFields inner(c.at(object), "config.json " + object);
    read_arch_field(inner, key.hf.substr(dot + 1), key.hf_default, key.member, a);
  } else {  // transformers 4
    read_arch_field(c, key.hf_legacy, key.hf_default, key.member, a);
  }
}

// The keys of the family's map that config.json has, then the sequence length it lacks: the
// position table (less roberta's padding offset, pad_token_id + 1: 512 of roberta-large's 514).
// ViT's comes from its patches after the checks, Mamba's with the recipe.
ArchSpec read_arch(const ConfigFields& c, const FamilyTraits& family) {
  ArchSpec a;
  for (const ArchKey& key : family.keys) {
    if (key.hf.empty()) {
      apply_default(key.member, key.hf_default, a);
    } else {
      read_key(c, key, a);
    }
  }
  if (family.seq_len_rule == SeqLenRule::kPositions) a.seq_len = a.max_position_embeddings;
  if (family.seq_len_rule == SeqLenRule::kPositionsLessPadding) {
    a.seq_len = a.max_position_embeddings - a.pad_token_id - 1;
  }
  return a;
}

struct FamilyVariant {
  const FamilyTraits& family;
  size_t variant;  // of family.hf
};

FamilyVariant family_of(const ConfigFields& c) {
  const std::string type = c.get_string_or("model_type", "");
  if (type.empty()) c.fail("model_type", "missing; not a transformers config.json");
  std::string valid;
  for (const FamilyTraits& f : all_family_traits()) {
    for (size_t v = 0; v < f.hf.size(); ++v) {
      if (type == f.hf[v].model_type) return {f, v};
      valid += (valid.empty() ? "" : ", ") + std::string(f.hf[v].model_type);
    }
  }
  c.fail("model_type", fmt::format("'{}' is not supported; valid: {}", type, valid));
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
  if (family_traits(m.family).seq_len_rule == SeqLenRule::kRecipeModel) {
    m.arch.seq_len = source.arch.seq_len;
  }
}

json parse_json(const std::string& path) {
  check_input_file(path, std::uintmax_t{16} << 20, "config.json files");
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
  if (const std::string problem = name_problem(id); !problem.empty()) {
    c.fail("_name_or_path", problem);
  }
  if (!id.empty()) return id;
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  return folder.filename().empty() ? "config" : folder.filename().string();
}

}  // namespace

bool is_hf_config_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

ModelSpec load_hf_config(const std::string& path, const std::vector<ModelSpec>& catalog) {
  const json doc = parse_json(path);
  const ConfigFields c(doc, path);
  ModelSpec m;
  m.source_path = path;
  const auto [family, variant] = family_of(c);
  m.family = family.family;
  m.name = name_of(c, path);
  m.hf_name = c.get_string_or("_name_or_path", "");
  m.arch = read_arch(c, family);
  if (family.hf_read != nullptr) family.hf_read(variant, doc, path, m.arch);
  const auto first = std::find_if(
      catalog.begin(), catalog.end(), [&](const ModelSpec& s) { return s.family == m.family; });
  if (first == catalog.end()) {
    throw InputError(fmt::format(
        "{}: the catalog has no {} model to take the recipe from", path, to_string(m.family)));
  }
  take_recipe(m, *first);  // for the checks; the nearest model's below
  validate_model(m);       // first: the sizes below are then bounded
  if (family.seq_len_rule == SeqLenRule::kPatches) m.arch.seq_len = patch_seq_len(m.arch);
  take_recipe(m, recipe_model(m, catalog));
  return m;
}

}  // namespace gpudays
