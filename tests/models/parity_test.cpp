// Parity with HuggingFace transformers (the reference implementation): tiny models built and
// randomised by make_fixtures.py, loaded here from the safetensors transformers wrote. Logits must
// match within 1e-5 absolute and every parameter's gradient within 1e-4 relative (fp32), for the
// plain and the fused attention. And a checkpoint saved here must load in transformers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/gpt_neox.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/safetensors.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

constexpr double kLogitTolerance = 1e-5;  // absolute, fp32
constexpr double kGradTolerance = 1e-4;   // max |g - g_ref| / max |g_ref| per parameter tensor

struct ParityCase {
  std::string name;
  AttentionKind attention;
  at::DeviceType device = at::kCPU;
};

std::string case_label(const testing::TestParamInfo<ParityCase>& info) {
  std::string label = info.param.name + "_" + to_string(info.param.attention) +
                      (info.param.device == at::kCUDA ? "_CUDA" : "");
  for (char& c : label) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return label;
}

void PrintTo(const ParityCase& c, std::ostream* out) {
  *out << c.name << " " << to_string(c.attention) << " " << at::DeviceTypeName(c.device, true);
}

class GptNeoxParity : public testing::TestWithParam<ParityCase> {};

TEST_P(GptNeoxParity, LogitsLossAndEveryGradientMatchTransformers) {
  if (GetParam().device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  const ModelSpec spec = test::tiny_spec(GetParam().name);
  GptNeoxOptions options = gpt_neox_options(spec, at::TensorOptions());
  options.attention = GetParam().attention;
  GptNeoxForCausalLM model(options);
  load_safetensors(*model, test::fixture_path(spec.name, "model.safetensors"),
                   hf_load_options(spec.family));
  model->to(GetParam().device);
  const SafetensorsReader expected(test::fixture_path(spec.name, "expected.safetensors"));
  const at::Tensor tokens = expected.read("input_ids").to(GetParam().device);

  const at::Tensor logits = model->forward(tokens);
  const double logit_diff = test::max_abs_diff(logits, expected.read("logits"));
  EXPECT_LT(logit_diff, kLogitTolerance);
  const at::Tensor loss = causal_lm_loss(logits, tokens);
  EXPECT_NEAR(loss.item<double>(), expected.read("loss").item<double>(), kLogitTolerance);
  loss.backward();

  double worst_grad = 0;
  std::string worst_name;
  size_t checked = 0;
  for (const auto& item : model->named_parameters()) {
    const double diff = test::max_rel_diff(item.value().grad(), expected.read("grad/" + item.key()));
    EXPECT_LT(diff, kGradTolerance) << item.key();
    if (diff >= worst_grad) std::tie(worst_grad, worst_name) = std::tie(diff, item.key());
    ++checked;
  }
  const auto grads = std::count_if(expected.entries().begin(), expected.entries().end(),
                                   [](const auto& e) { return e.first.starts_with("grad/"); });
  EXPECT_EQ(checked, static_cast<size_t>(grads)) << "every reference gradient is checked";
  RecordProperty("max_logit_abs_diff", fmt::format("{:.3g}", logit_diff));
  RecordProperty("max_grad_rel_diff", fmt::format("{:.3g} ({})", worst_grad, worst_name));
  std::cout << fmt::format("[parity] {} {} {}: logits max abs diff {:.3g}, gradients max rel diff "
                           "{:.3g} ({})\n",
                           spec.name, to_string(GetParam().attention),
                           at::DeviceTypeName(GetParam().device, /*lower_case=*/true), logit_diff, worst_grad,
                           worst_name);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    GptNeoxParity,
    testing::Values(ParityCase{"tiny-gpt-neox", AttentionKind::kPlain},
                    ParityCase{"tiny-gpt-neox", AttentionKind::kFused},
                    ParityCase{"tiny-gpt-neox-sequential", AttentionKind::kPlain},
                    ParityCase{"tiny-gpt-neox-sequential", AttentionKind::kFused},
                    ParityCase{"tiny-gpt-neox", AttentionKind::kPlain, at::kCUDA},
                    ParityCase{"tiny-gpt-neox", AttentionKind::kFused, at::kCUDA}),
    case_label);

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Our config.json carries the same architecture as the one transformers wrote for the fixture.
TEST(GptNeoxExport, ConfigJsonAgreesWithTransformers) {
  const ModelSpec spec = test::tiny_spec("tiny-gpt-neox-sequential");
  const nlohmann::json ours = hf_config_json(spec);
  const nlohmann::json theirs = read_json(test::fixture_path(spec.name, "config.json"));
  for (const char* key :
       {"model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
        "intermediate_size", "hidden_act", "max_position_embeddings", "layer_norm_eps",
        "use_parallel_residual", "tie_word_embeddings", "attention_bias", "rope_parameters"}) {
    EXPECT_EQ(ours.at(key), theirs.at(key)) << key;
  }
}

// A model saved here (config.json + model.safetensors) loads with from_pretrained and gives our
// logits (tests/models/check_hf_load.py, run in the reference environment).
TEST(GptNeoxExport, SavedCheckpointLoadsInTransformers) {
  const ModelSpec spec = test::tiny_spec("tiny-gpt-neox");
  torch::manual_seed(7);
  GptNeoxForCausalLM model(gpt_neox_options(spec, at::TensorOptions()));
  const std::string dir = test::scratch_dir("hf-export");
  save_pretrained(*model, spec, dir);
  const at::Tensor tokens = at::randint(spec.arch.vocab_size, {2, 16});
  write_safetensors(dir + "/expected.safetensors",
                    {{"input_ids", tokens}, {"logits", model->forward(tokens).detach()}});
  const std::string command =
      fmt::format("'{}' '{}/tests/models/check_hf_load.py' '{}' {}", test::ref_python(),
                  test::source_dir(), dir, kLogitTolerance);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
}  // namespace gpudays::models
