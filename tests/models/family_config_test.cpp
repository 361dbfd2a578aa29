// config.json written here (the catalog's hf_config_of) against the one transformers wrote for
// each tiny fixture: the same architecture under every key its class reads, for every family and
// each of the llama family's three classes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "family_test_util.h"
#include "models/hf_export.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

using test::case_label;

struct ConfigCase {
  std::string label;
  std::string spec;  // tests/models/data/<spec>.toml and fixtures/<spec>/config.json
  std::vector<std::string> keys;
  bool num_labels;  // ours num_labels equals the size of their id2label
};

void PrintTo(const ConfigCase& c, std::ostream* out) {
  *out << c.label;
}

class ConfigJson : public testing::TestWithParam<ConfigCase> {};

// Our config.json carries the same architecture as the one transformers wrote for the fixture.
TEST_P(ConfigJson, AgreesWithTransformers) {
  const ConfigCase& c = GetParam();
  const nlohmann::json ours = hf_config_json(test::tiny_spec(c.spec));
  std::ifstream in(test::fixture_path(c.spec, "config.json"));
  const nlohmann::json theirs = nlohmann::json::parse(in);
  for (const std::string& key : c.keys) EXPECT_EQ(ours.at(key), theirs.at(key)) << key;
  if (c.num_labels) {
    EXPECT_EQ(ours.at("num_labels"), theirs.at("id2label").size());
  }
}

const std::vector<std::string> kMambaKeys = {"architectures",      "model_type",
                                             "vocab_size",         "hidden_size",
                                             "num_hidden_layers",  "state_size",
                                             "conv_kernel",        "expand",
                                             "intermediate_size",  "time_step_rank",
                                             "use_bias",           "use_conv_bias",
                                             "hidden_act",         "layer_norm_epsilon",
                                             "residual_in_fp32",   "rescale_prenorm_residual",
                                             "initializer_range",  "time_step_init_scheme",
                                             "time_step_min",      "time_step_max",
                                             "time_step_floor",    "time_step_scale",
                                             "tie_word_embeddings"};

// The llama family's keys; each variant adds its own (model_type and architectures differ).
std::vector<std::string> llama_keys(std::vector<std::string> variant) {
  std::vector<std::string> keys = {"architectures",
                                   "model_type",
                                   "vocab_size",
                                   "hidden_size",
                                   "num_hidden_layers",
                                   "num_attention_heads",
                                   "num_key_value_heads",
                                   "head_dim",
                                   "intermediate_size",
                                   "hidden_act",
                                   "max_position_embeddings",
                                   "rope_parameters",
                                   "tie_word_embeddings",
                                   "bos_token_id",
                                   "eos_token_id",
                                   "initializer_range",
                                   "attention_dropout"};
  keys.insert(keys.end(), variant.begin(), variant.end());
  return keys;
}

INSTANTIATE_TEST_SUITE_P(
    Llama,
    ConfigJson,
    testing::Values(ConfigCase{"llama",
                               "tiny-llama",
                               llama_keys({"rms_norm_eps", "attention_bias", "mlp_bias"}),
                               /*num_labels=*/false},
                    ConfigCase{"qwen2",
                               "tiny-qwen2",
                               llama_keys({"rms_norm_eps", "use_sliding_window"}),
                               /*num_labels=*/false},
                    ConfigCase{"olmo",
                               "tiny-olmo",
                               llama_keys({"attention_bias", "clip_qkv"}),
                               /*num_labels=*/false}),
    case_label);

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    ConfigJson,
    testing::Values(ConfigCase{"gpt_neox_sequential",
                               "tiny-gpt-neox-sequential",
                               {"model_type",
                                "vocab_size",
                                "hidden_size",
                                "num_hidden_layers",
                                "num_attention_heads",
                                "intermediate_size",
                                "hidden_act",
                                "max_position_embeddings",
                                "layer_norm_eps",
                                "use_parallel_residual",
                                "tie_word_embeddings",
                                "attention_bias",
                                "rope_parameters"},
                               /*num_labels=*/false},
                    ConfigCase{"roberta",
                               "tiny-roberta",
                               {"model_type",
                                "vocab_size",
                                "hidden_size",
                                "num_hidden_layers",
                                "num_attention_heads",
                                "intermediate_size",
                                "hidden_act",
                                "max_position_embeddings",
                                "type_vocab_size",
                                "layer_norm_eps",
                                "pad_token_id",
                                "tie_word_embeddings"},
                               /*num_labels=*/false},
                    ConfigCase{"mamba", "tiny-mamba", kMambaKeys, /*num_labels=*/false},
                    ConfigCase{"mamba_bias", "tiny-mamba-bias", kMambaKeys, /*num_labels=*/false},
                    ConfigCase{"vit",
                               "tiny-vit",
                               {"architectures",
                                "model_type",
                                "hidden_size",
                                "num_hidden_layers",
                                "num_attention_heads",
                                "intermediate_size",
                                "hidden_act",
                                "image_size",
                                "patch_size",
                                "num_channels",
                                "qkv_bias",
                                "layer_norm_eps"},
                               /*num_labels=*/true},
                    ConfigCase{"convnext",
                               "tiny-convnext",
                               {"architectures",
                                "model_type",
                                "num_channels",
                                "patch_size",
                                "num_stages",
                                "depths",
                                "hidden_sizes",
                                "hidden_act",
                                "image_size",
                                "layer_norm_eps",
                                "layer_scale_init_value",
                                "drop_path_rate"},
                               /*num_labels=*/true}),
    case_label);

}  // namespace
}  // namespace gpudays::models
