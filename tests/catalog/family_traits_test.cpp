// The family table (catalog/family_traits.h) and the two file formats it drives: every catalog
// model written as a model TOML file and as a config.json reads back as the same ModelSpec.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/family_traits.h"
#include "catalog/hf_config.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// The same model in every field the files describe: the model TOML text covers each key of the
// family's map, the recipe and the reported run (the other ArchSpec fields are the defaults).
void expect_same_model(const ModelSpec& got, const ModelSpec& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.family, want.family);
  EXPECT_EQ(got.hf_name, want.hf_name);
  EXPECT_EQ(model_toml(got), model_toml(want));
}

TEST(FamilyTraits, EveryFamilyHasOneRowWithDistinctKeys) {
  std::set<std::string> names;
  for (const FamilyTraits& f : all_family_traits()) {
    EXPECT_TRUE(names.insert(std::string(f.name)).second) << f.name;
    EXPECT_EQ(&family_traits(f.family), &f);
    EXPECT_EQ(parse_family(std::string(f.name)), f.family);
    std::set<std::string_view> toml_keys;
    std::set<std::string_view> hf_keys;
    for (const ArchKey& key : f.keys) {
      if (!key.toml.empty()) {
        EXPECT_TRUE(toml_keys.insert(key.toml).second) << f.name << " " << key.toml;
      }
      if (!key.hf.empty()) {
        EXPECT_TRUE(hf_keys.insert(key.hf).second) << f.name << " " << key.hf;
      }
    }
  }
  EXPECT_EQ(names.size(), 6u);
}

TEST(FamilyTraits, FactsMatchTheFamilies) {
  EXPECT_TRUE(is_vision(Family::kVit));
  EXPECT_TRUE(is_vision(Family::kConvnext));
  EXPECT_FALSE(is_vision(Family::kMamba));
  EXPECT_TRUE(is_transformer_lm(Family::kGptNeox));
  EXPECT_TRUE(is_transformer_lm(Family::kRoberta));
  EXPECT_FALSE(is_transformer_lm(Family::kVit));
  EXPECT_FALSE(is_transformer_lm(Family::kMamba));
  EXPECT_TRUE(is_transformer_lm(Family::kLlama));
  EXPECT_EQ(family_traits(Family::kRoberta).objective, Objective::kMaskedLm);
  EXPECT_FALSE(family_traits(Family::kConvnext).hf_gradient_checkpointing);
  EXPECT_EQ(family_traits(Family::kMamba).hf[0].layer_class, "MambaBlock");
}

TEST(FamilyTraits, UnknownFamilyNamesTheChoices) {
  try {
    parse_family("gemma");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown family 'gemma'; valid: gpt_neox, roberta, vit, convnext, mamba or llama");
  }
}

TEST(ModelToml, EveryCatalogModelReadsBackAsTheSameSpec) {
  for (const ModelSpec& model : catalog().models()) {
    const std::string path = test::write_temp_file(model.name + ".toml", model_toml(model));
    expect_same_model(load_model_file(path), model);
  }
}

// config.json holds the architecture only: the recipe (and Mamba's sequence length) is the
// nearest catalog model's, which for a catalog model is itself.
TEST(HfConfigJson, EveryCatalogModelReadsBackAsTheSameSpec) {
  std::set<Family> families;
  for (const ModelSpec& model : catalog().models()) {
    families.insert(model.family);
    const std::string path =
        test::write_temp_file(model.name + "-config.json", hf_config_of(model).dump(2) + "\n");
    ModelSpec read = load_hf_config(path, catalog().models());
    read.name = model.name;  // config.json names the model by _name_or_path, which it lacks here
    read.hf_name = model.hf_name;
    read.reported = model.reported;  // not in a config.json
    expect_same_model(read, model);
    EXPECT_EQ(hf_config_of(read), hf_config_of(model)) << model.name;
  }
  EXPECT_EQ(families.size(), all_family_traits().size());
}

TEST(HfConfigJson, NestedRopeKeysAlsoCarryTheirLegacyNames) {
  const nlohmann::json config = hf_config_of(catalog().model("pythia-70m"));
  EXPECT_EQ(config.at("architectures").at(0), "GPTNeoXForCausalLM");
  EXPECT_EQ(config.at("rope_parameters").at("rope_type"), "default");
  EXPECT_EQ(config.at("rope_parameters").at("partial_rotary_factor"), config.at("rotary_pct"));
  EXPECT_EQ(config.at("rope_parameters").at("rope_theta"), config.at("rotary_emb_base"));
}

}  // namespace
}  // namespace gpudays
