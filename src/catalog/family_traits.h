// The facts of each model family in one table: names, HuggingFace classes, modality, objective,
// and the architecture key map that the model TOML reader and writer, the config.json reader and
// writer, and the measurement reader share. Per-family maths (counts, checks, FLOPs, modules)
// stays in param_count.cpp, model_validate.cpp, plan/workload_*.cpp and models/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "catalog/model_spec.h"

namespace gpudays {

enum class Modality { kText, kImage };
enum class Objective { kCausalLm, kMaskedLm, kClassification };

// Where the sequence length comes from when a file does not give it.
enum class SeqLenRule {
  kGiven,                 // convnext: no sequence; the readers take what is there
  kPositions,             // gpt_neox: config.json's position table; TOML max_position_embeddings
                          // defaults to seq_len
  kPositionsLessPadding,  // roberta: max_position_embeddings - pad_token_id - 1
  kPatches,               // vit: (image_size / patch_size)^2 + 1 (class token) everywhere
  kRecipeModel,           // mamba: config.json has none; the recipe model's
};

// The value of a key a file leaves out: none (the key is required), a constant, or another
// field's value (read before it).
struct KeyDefault {
  bool required = true;
  double value = 0.0;                    // int64 and bool fields convert it
  int64_t ArchSpec::*same_as = nullptr;  // this field's value instead of `value`
};
inline constexpr KeyDefault kRequired{};
constexpr KeyDefault or_value(double value) {
  return {.required = false, .value = value};
}
constexpr KeyDefault or_field(int64_t ArchSpec::*field) {
  return {.required = false, .same_as = field};
}

using ArchMember = std::variant<int64_t ArchSpec::*,
                                double ArchSpec::*,
                                bool ArchSpec::*,
                                std::vector<int64_t> ArchSpec::*>;

// One architecture field in every dialect.
struct ArchKey {
  ArchMember member;
  // Key in a model TOML file's [arch]; empty (and `hf` empty): a constant of the family, its
  // defaults' value, that no file holds.
  std::string_view toml;
  std::string_view hf;  // config.json key; "a.b": key b of object a; empty: config.json lacks it
  KeyDefault toml_default;
  KeyDefault hf_default;
  bool measured = false;            // published measurements' inline [arch] gives it
  std::string_view hf_legacy = {};  // transformers 4.x name, read when hf's object is absent
};

// One transformers model class the family reads and writes (llama: also Qwen2's and OLMo's).
struct HfVariant {
  std::string_view model_type;   // config.json model_type
  std::string_view cls;          // config.json architectures[0]
  std::string_view layer_class;  // FSDP wrap unit (transformers' _no_split_modules[0])
};

struct FamilyTraits {
  Family family;
  std::string_view name;           // our name (model TOML family, --model-file)
  std::vector<HfVariant> hf;       // [0]: the family's own class
  bool hf_gradient_checkpointing;  // transformers' supports_gradient_checkpointing
  Modality modality;
  Objective objective;
  bool attention;
  SeqLenRule seq_len_rule;
  std::vector<ArchKey> keys;
  // The config.json fields beside the key map: constants and values of the recipe.
  void (*hf_extras)(const ModelSpec& model, nlohmann::json& config);
  // Which of `hf` a model is (null: the first).
  size_t (*hf_variant_of)(const ArchSpec& arch) = nullptr;
  // After the key map, config.json of hf[variant]: the fields the variant fixes, and an InputError
  // naming `path` and the field for what the family cannot express (null: nothing).
  void (*hf_read)(size_t variant,
                  const nlohmann::json& config,
                  const std::string& path,
                  ArchSpec& arch) = nullptr;
};

const std::vector<FamilyTraits>& all_family_traits();
FamilyTraits llama_family();  // its row, in family_llama.cpp
// The transformers class of `model` (its family's, or a variant's: Qwen2, OLMo).
const HfVariant& hf_variant(const ModelSpec& model);
const FamilyTraits& family_traits(Family family);
std::vector<std::string> family_names();  // in table order
// Language models built of attention blocks (gpt_neox, roberta, llama): compute-optimal
// scaling's.
bool is_transformer_lm(Family family);

// ViT's tokens per image: (image_size / patch_size)^2 patches and the class token.
int64_t patch_seq_len(const ArchSpec& arch);

}  // namespace gpudays
