// Mamba parity with HuggingFace transformers' MambaForCausalLM (slow path): tiny models built and
// randomised by make_fixtures.py, loaded from the safetensors transformers wrote. Logits within
// 1e-5 absolute, every gradient within 1e-4 relative (fp32), for both scans. Checkpoints saved
// here load in transformers; mismatched checkpoints are rejected with every problem listed.
// config.json against transformers' is in family_behaviour_test.cpp.
#include <ATen/ops/randint.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/utils.h>


#include "common/error.h"
#include "family_test_util.h"
#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/mamba.h"
#include "models/safetensors.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

constexpr double kLogitTolerance = 1e-5;  // absolute, fp32
constexpr double kGradTolerance = 1e-4;   // max |g - g_ref| / max |g_ref| per parameter tensor

struct MambaCase {
  std::string name;  // tests/models/data/<name>.toml, fixtures/<name>/
  ScanKind scan;
  at::DeviceType device = at::kCPU;
};

void PrintTo(const MambaCase& c, std::ostream* out) {
  *out << c.name << " " << to_string(c.scan) << " " << at::DeviceTypeName(c.device, true);
}

std::string case_label(const testing::TestParamInfo<MambaCase>& info) {
  std::string label = info.param.name + "_" + to_string(info.param.scan) +
                      (info.param.device == at::kCUDA ? "_CUDA" : "");
  for (char& c : label) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return label;
}

class MambaParity : public testing::TestWithParam<MambaCase> {};

TEST_P(MambaParity, LogitsLossAndEveryGradientMatchTransformers) {
  const MambaCase& c = GetParam();
  if (c.device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  const ModelSpec spec = test::tiny_spec(c.name);
  MambaOptions options = mamba_options(spec, at::TensorOptions());
  options.scan = c.scan;
  MambaForCausalLM model(options);
  load_safetensors(
      *model, test::fixture_path(spec.name, "model.safetensors"), hf_load_options(spec.family));
  model->to(c.device);
  const SafetensorsReader expected(test::fixture_path(spec.name, "expected.safetensors"));
  const at::Tensor tokens = expected.read("input_ids").to(c.device);

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
    const double diff =
        test::max_rel_diff(item.value().grad(), expected.read("grad/" + item.key()));
    EXPECT_LT(diff, kGradTolerance) << item.key();
    if (diff >= worst_grad) std::tie(worst_grad, worst_name) = std::tie(diff, item.key());
    ++checked;
  }
  const auto grads = std::count_if(expected.entries().begin(),
                                   expected.entries().end(),
                                   [](const auto& e) { return e.first.starts_with("grad/"); });
  EXPECT_EQ(checked, static_cast<size_t>(grads)) << "every reference gradient is checked";
  std::cout << fmt::format(
      "[parity] {} {} scan {}: logits max abs diff {:.3g}, gradients max rel "
      "diff {:.3g} ({})\n",
      spec.name,
      to_string(c.scan),
      at::DeviceTypeName(c.device, true),
      logit_diff,
      worst_grad,
      worst_name);
}

INSTANTIATE_TEST_SUITE_P(Tiny,
                         MambaParity,
                         testing::Values(MambaCase{"tiny-mamba", ScanKind::kPlain},
                                         MambaCase{"tiny-mamba", ScanKind::kFused},
                                         MambaCase{"tiny-mamba-bias", ScanKind::kPlain},
                                         MambaCase{"tiny-mamba-bias", ScanKind::kFused},
                                         MambaCase{"tiny-mamba", ScanKind::kPlain, at::kCUDA}),
                         case_label);

// A model initialised here, saved with save_pretrained, loads with from_pretrained and gives our
// logits (tests/models/check_hf_load.py, run in the reference environment).
TEST(MambaExport, SavedCheckpointLoadsInTransformers) {
  const ModelSpec spec = test::tiny_spec("tiny-mamba-bias");
  torch::manual_seed(7);
  MambaForCausalLM model(mamba_options(spec, at::TensorOptions()));
  const std::string dir = test::scratch_dir("hf-export-mamba");
  save_pretrained(*model, spec, dir);
  const at::Tensor tokens = at::randint(spec.arch.vocab_size, {2, 20});
  write_safetensors(dir + "/expected.safetensors",
                    {{"input_ids", tokens}, {"logits", model->forward(tokens).detach()}});
  std::string command;
  EXPECT_TRUE(test::transformers_loads(dir, kLogitTolerance, &command)) << command;
}

std::string load_error(MambaForCausalLM& model, const std::string& path) {
  try {
    load_safetensors(*model, path, hf_load_options(Family::kMamba));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A checkpoint of another shape, or with tensors missing, is rejected as a whole: every missing
// and mis-shaped tensor named, nothing loaded.
TEST(MambaCheckpoint, MismatchesAreListedAndNothingIsLoaded) {
  const ModelSpec spec = test::tiny_spec("tiny-mamba");
  MambaForCausalLM source(mamba_options(spec, at::TensorOptions()));
  NamedTensors state = named_state(*source);
  std::erase_if(state, [](const auto& item) {
    return item.first == "backbone.layers.1.mixer.D" || item.first == "backbone.norm_f.weight";
  });
  const std::string dir = test::scratch_dir("mamba-ckpt");
  write_safetensors(dir + "/partial.safetensors", state);
  ModelSpec wider = spec;
  wider.arch.d_state = 8;  // A_log [64, 8] and x_proj [4 + 16, 64] no longer fit
  MambaForCausalLM target(mamba_options(wider, at::TensorOptions()));
  const at::Tensor before = target->named_parameters()["backbone.embeddings.weight"].clone();

  const std::string error = load_error(target, dir + "/partial.safetensors");
  for (const char* part :
       {"missing [backbone.layers.1.mixer.D, backbone.norm_f.weight]",
        "backbone.layers.0.mixer.A_log is [64, 16], model needs [64, 8]",
        "backbone.layers.1.mixer.x_proj.weight is [36, 64], model needs [20, 64]"}) {
    EXPECT_NE(error.find(part), std::string::npos) << "expected '" << part << "' in: " << error;
  }
  EXPECT_TRUE(target->named_parameters()["backbone.embeddings.weight"].equal(before));
}

// Original mamba_ssm checkpoints name the embedding "backbone.embedding.weight"; both load.
TEST(MambaCheckpoint, AcceptsTheOriginalEmbeddingName) {
  const ModelSpec spec = test::tiny_spec("tiny-mamba");
  MambaForCausalLM source(mamba_options(spec, at::TensorOptions()));
  NamedTensors state = named_state(*source);
  for (auto& [name, tensor] : state) {
    if (name == "backbone.embeddings.weight") name = "backbone.embedding.weight";
  }
  const std::string path = test::scratch_dir("mamba-ckpt-orig") + "/model.safetensors";
  write_safetensors(path, state);
  MambaForCausalLM target(mamba_options(spec, at::TensorOptions()));
  EXPECT_EQ(load_error(target, path), "(no error)");
  EXPECT_TRUE(target->named_parameters()["backbone.embeddings.weight"].equal(
      source->named_parameters()["backbone.embeddings.weight"]));
}

}  // namespace
}  // namespace gpudays::models
