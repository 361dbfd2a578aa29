// --model-file with a HuggingFace config.json (catalog/hf_config.h): the files in
// tests/data/hf-configs/ were written by transformers' save_pretrained (make_configs.py there)
// with the public configurations of the catalog's models; each must read back as that model.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/hf_config.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string config_path(const std::string& folder) {
  return std::string(GPUDAYS_TEST_DATA_DIR) + "/hf-configs/" + folder + "/config.json";
}

void expect_same_arch(const ArchSpec& got, const ArchSpec& want, const std::string& what) {
  EXPECT_EQ(got.n_layers, want.n_layers) << what;
  EXPECT_EQ(got.d_model, want.d_model) << what;
  EXPECT_EQ(got.n_heads, want.n_heads) << what;
  EXPECT_EQ(got.d_ffn, want.d_ffn) << what;
  EXPECT_EQ(got.vocab_size, want.vocab_size) << what;
  EXPECT_EQ(got.seq_len, want.seq_len) << what;
  EXPECT_EQ(got.max_position_embeddings, want.max_position_embeddings) << what;
  EXPECT_DOUBLE_EQ(got.rotary_pct, want.rotary_pct) << what;
  EXPECT_DOUBLE_EQ(got.rotary_emb_base, want.rotary_emb_base) << what;
  EXPECT_DOUBLE_EQ(got.layer_norm_eps, want.layer_norm_eps) << what;
  EXPECT_DOUBLE_EQ(got.initializer_range, want.initializer_range) << what;
  EXPECT_EQ(got.use_parallel_residual, want.use_parallel_residual) << what;
  EXPECT_EQ(got.tie_word_embeddings, want.tie_word_embeddings) << what;
  EXPECT_EQ(got.type_vocab_size, want.type_vocab_size) << what;
  EXPECT_EQ(got.pad_token_id, want.pad_token_id) << what;
  EXPECT_EQ(got.image_size, want.image_size) << what;
  EXPECT_EQ(got.patch_size, want.patch_size) << what;
  EXPECT_EQ(got.num_channels, want.num_channels) << what;
  EXPECT_EQ(got.depths, want.depths) << what;
  EXPECT_EQ(got.hidden_sizes, want.hidden_sizes) << what;
  EXPECT_EQ(got.d_state, want.d_state) << what;
  EXPECT_EQ(got.d_conv, want.d_conv) << what;
  EXPECT_EQ(got.expand, want.expand) << what;
  EXPECT_EQ(got.dt_rank, want.dt_rank) << what;
  EXPECT_EQ(got.conv_bias, want.conv_bias) << what;
  EXPECT_EQ(got.proj_bias, want.proj_bias) << what;
  EXPECT_EQ(got.n_kv_heads, want.n_kv_heads) << what;
  EXPECT_EQ(got.head_dim, want.head_dim) << what;
  EXPECT_EQ(got.gated_ffn, want.gated_ffn) << what;
  EXPECT_EQ(got.qkv_bias, want.qkv_bias) << what;
  EXPECT_EQ(got.parameter_free_layer_norm, want.parameter_free_layer_norm) << what;
}

TEST(HfConfig, EveryFamilyReadsBackAsTheCatalogsModel) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pythia-160m", "pythia-160m"},
      {"roberta-large", "roberta"},
      {"vit-large-patch16-224-in21k", "vit"},
      {"convnext-large-224", "convnext-large-1k"},
      {"mamba-2.8b-hf", "mamba"},
      {"tinyllama-1.1b", "tinyllama-1.1b"},
      {"olmo-1b-hf", "olmo-1b"},
      {"smollm-135m", "smollm-135m"}};
  for (const auto& [folder, name] : files) {
    const ModelSpec got = catalog().resolve_model("", config_path(folder));
    ModelSpec want = catalog().model(name);
    EXPECT_EQ(got.family, want.family) << folder;
    EXPECT_EQ(got.name, folder);  // no hub id saved: the folder's name
    if (is_vision(want.family)) {
      EXPECT_EQ(got.arch.num_labels, 10) << folder;  // the files' small heads
      want.arch.num_labels = 10;
    }
    expect_same_arch(got.arch, want.arch, folder);
    EXPECT_EQ(count_params(got).total, count_params(want).total) << folder;
    // The recipe: the same family's catalog model nearest in parameters, here the model itself.
    EXPECT_EQ(got.recipe.lr, want.recipe.lr) << folder;
    EXPECT_EQ(got.recipe.global_batch, want.recipe.global_batch) << folder;
    EXPECT_EQ(got.recipe.train_steps, want.recipe.train_steps) << folder;
  }
}

TEST(HfConfig, TheRecipeComesFromTheNearestCatalogModel) {
  nlohmann::json config = nlohmann::json::parse(
      read_file(config_path("pythia-160m")));  // 12 x 768: resized to pythia-1b's shape
  config["num_hidden_layers"] = 16;
  config["hidden_size"] = 2048;
  config["num_attention_heads"] = 8;
  config["intermediate_size"] = 8192;
  config["_name_or_path"] = "someone/neox-1b";
  const std::string path = test::write_temp_file("neox-1b.json", config.dump());
  const ModelSpec m = catalog().resolve_model("", path);
  EXPECT_EQ(m.name, "someone/neox-1b");
  EXPECT_EQ(m.hf_name, "someone/neox-1b");
  EXPECT_EQ(m.recipe.lr, catalog().model("pythia-1b").recipe.lr);
  EXPECT_EQ(m.recipe.precision, Precision::kBf16);  // pythia-1b's
}

// Qwen2: the llama family with q/k/v biases; written back as Qwen2ForCausalLM.
TEST(HfConfig, Qwen2ReadsAsTheLlamaFamilyWithQkvBiases) {
  const ModelSpec m = catalog().resolve_model("", config_path("qwen2-0.5b"));
  EXPECT_EQ(m.family, Family::kLlama);
  EXPECT_TRUE(m.arch.qkv_bias);
  EXPECT_FALSE(m.arch.parameter_free_layer_norm);
  EXPECT_EQ(m.arch.key_value_heads(), 2);
  EXPECT_EQ(m.arch.attention_head_dim(), 64);
  EXPECT_DOUBLE_EQ(m.arch.rotary_emb_base, 1e6);
  EXPECT_DOUBLE_EQ(m.arch.layer_norm_eps, 1e-6);
  EXPECT_TRUE(m.arch.tie_word_embeddings);
  EXPECT_EQ(m.arch.seq_len, 32768);             // the position table
  EXPECT_EQ(count_params(m).total, 494032768);  // Qwen2ForCausalLM.num_parameters()
  const nlohmann::json written = hf_config_of(m);
  EXPECT_EQ(written.at("model_type"), "qwen2");
  EXPECT_EQ(written.at("architectures").at(0), "Qwen2ForCausalLM");
  const ModelSpec again =
      catalog().resolve_model("", test::write_temp_file("qwen2-again.json", written.dump(2)));
  expect_same_arch(again.arch, m.arch, "written back");
}

std::string refused(const nlohmann::json& config) {
  const std::string path = test::write_temp_file("bad-config.json", config.dump());
  try {
    catalog().resolve_model("", path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(HfConfig, UnsupportedOrIncompleteFilesAreOneLineErrors) {
  nlohmann::json config = nlohmann::json::parse(read_file(config_path("roberta-large")));
  nlohmann::json gemma = config;
  gemma["model_type"] = "gemma";
  EXPECT_NE(refused(gemma).find("model_type: 'gemma' is not supported; valid: gpt_neox, roberta, "
                                "vit, convnext, mamba, llama, qwen2, olmo"),
            std::string::npos)
      << refused(gemma);
  nlohmann::json missing = config;
  missing.erase("hidden_size");
  EXPECT_NE(refused(missing).find("hidden_size: missing"), std::string::npos) << refused(missing);
  nlohmann::json typed = config;
  typed["num_hidden_layers"] = "24";
  EXPECT_NE(refused(typed).find("num_hidden_layers: not an integer"), std::string::npos);
  nlohmann::json shapes = config;
  shapes["num_attention_heads"] = 7;  // does not divide 1024
  EXPECT_NE(refused(shapes), "accepted");
  const auto r = test::run_gpudays("plan --gpu a100 --model-file " +
                                   test::write_temp_file("broken.json", "{\"model_type\": "));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// What the llama family cannot express is refused with the field named, never read approximately.
TEST(HfConfig, LlamaFeaturesTheFamilyLacksAreRefusedNamingTheField) {
  const nlohmann::json llama = nlohmann::json::parse(read_file(config_path("tinyllama-1.1b")));
  const nlohmann::json qwen2 = nlohmann::json::parse(read_file(config_path("qwen2-0.5b")));
  const nlohmann::json olmo = nlohmann::json::parse(read_file(config_path("olmo-1b-hf")));
  const auto with = [](nlohmann::json config, const std::string& key, nlohmann::json value) {
    config[key] = std::move(value);
    return config;
  };
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {with(qwen2, "use_sliding_window", true), "use_sliding_window: sliding-window"},
      {with(qwen2, "layer_types", {"full_attention", "sliding_attention"}), "layer_types:"},
      {with(llama, "rope_parameters", {{"rope_type", "llama3"}, {"rope_theta", 5e5}}),
       "rope_parameters.rope_type: \"llama3\" is not implemented"},
      {with(llama, "rope_scaling", {{"type", "linear"}, {"factor", 2.0}}), "rope_scaling:"},
      {with(llama, "attention_bias", true), "attention_bias: biases on q, k, v and o"},
      {with(llama, "mlp_bias", true), "mlp_bias:"},
      {with(llama, "hidden_act", "gelu"), "hidden_act:"},
      {with(olmo, "clip_qkv", 8.0), "clip_qkv:"},
      {with(llama, "num_key_value_heads", 3), "n_kv_heads: 3 does not divide n_heads 32"},
  };
  for (const auto& [config, needle] : cases) {
    const std::string error = refused(config);
    EXPECT_NE(error.find(needle), std::string::npos) << needle << " -> " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  nlohmann::json missing = llama;
  missing.erase("intermediate_size");
  const auto r = test::run_gpudays("plan --gpu a100 --model-file " +
                                   test::write_temp_file("no-ffn.json", missing.dump()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("intermediate_size: missing"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Integers past 64 bits, fractions and numbers past a double's range are refused with the file
// and the key, never wrapped (10^19 read as a negative) or truncated.
TEST(HfConfig, IntegersBeyond64BitsOrFractionsAreOneLineErrors) {
  const std::string text = read_file(config_path("convnext-large-224"));
  for (const char* value : {"10000000000000000000", "4.9e19", "-1.5", "1e400", "12.0"}) {
    for (const bool in_array : {false, true}) {
      nlohmann::json config = nlohmann::json::parse(text);
      const std::string key = in_array ? "depths" : "num_channels";
      config[key] = in_array ? nlohmann::json::array({3, 3, 27, 0}) : nlohmann::json(0);
      std::string body = config.dump();
      const std::string placeholder = in_array ? "27,0]" : "\"num_channels\":0";
      const std::string replacement =
          in_array ? fmt::format("27,{}]", value) : fmt::format("\"num_channels\":{}", value);
      body.replace(body.find(placeholder), placeholder.size(), replacement);
      const std::string path = test::write_temp_file("huge-int.json", body);
      std::string error = "accepted";
      try {
        catalog().resolve_model("", path);
      } catch (const InputError& e) {
        error = e.what();
      }
      const std::string want =
          std::string(value) == "1e400" ? path + ": a number out of range" : path + ": " + key;
      EXPECT_EQ(error.rfind(want, 0), 0u) << value << " in " << key << ": " << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
  }
}

TEST(HfConfig, CommandsTakeItAsModelFile) {
  const std::string file = config_path("pythia-160m");
  const auto plan = test::run_gpudays("plan --gpu a100 --gpus-per-node 4 --model-file " + file);
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  const auto exp =
      test::run_gpudays("export --gpu a100 --gpus-per-node 4 --source plan --model-file " + file);
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  EXPECT_EQ(nlohmann::json::parse(exp.out)["max_steps"], 143000);
}

}  // namespace
}  // namespace gpudays
