// Mamba checkpoints: a model saved here loads in transformers' MambaForCausalLM with our logits;
// mismatched checkpoints are rejected with every problem listed; the original embedding name loads.
// Parity with transformers is in parity_test.cpp, config.json in family_behaviour_test.cpp.
#include <ATen/ops/randint.h>
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
