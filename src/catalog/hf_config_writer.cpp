// ModelSpec -> config.json, the inverse of hf_config.cpp: the family key map (family_traits.cpp)
// under transformers' names, nested "a.b" keys also under their 4.x name, then the family's
// constant fields. models/hf_export.cpp writes it beside the weights.
#include <string>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "catalog/family_traits.h"
#include "catalog/hf_config.h"

namespace gpudays {
namespace {

nlohmann::json json_value(const ArchSpec& a, const ArchMember& member) {
  return std::visit([&](auto field) { return nlohmann::json(a.*field); }, member);
}

void write_key(const ArchSpec& a, const ArchKey& key, nlohmann::json& config) {
  const nlohmann::json value = json_value(a, key.member);
  const size_t dot = key.hf.find('.');
  if (dot == std::string_view::npos) {
    config[std::string(key.hf)] = value;
    return;
  }
  config[std::string(key.hf.substr(0, dot))][std::string(key.hf.substr(dot + 1))] = value;
  if (!key.hf_legacy.empty()) config[std::string(key.hf_legacy)] = value;  // transformers 4.x
}

}  // namespace

nlohmann::json hf_config_of(const ModelSpec& model) {
  const FamilyTraits& family = family_traits(model.family);
  const HfVariant& variant = hf_variant(model);
  nlohmann::json config = {{"architectures", {std::string(variant.cls)}},
                           {"model_type", std::string(variant.model_type)}};
  for (const ArchKey& key : family.keys) {
    if (!key.hf.empty()) write_key(model.arch, key, config);
  }
  family.hf_extras(model, config);
  return config;
}

}  // namespace gpudays
