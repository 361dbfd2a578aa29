// Checkpoints of every family: a model saved here loads in transformers with our logits; a
// checkpoint of another shape, or with tensors missing or extra, is rejected as a whole, every
// problem named and nothing loaded (one table); original mamba_ssm names load.
#include <ATen/ops/equal.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "common/error.h"
#include "family_test_util.h"
#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/mamba.h"
#include "models/safetensors.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

constexpr double kLogitTolerance = 1e-5;  // absolute, fp32

struct ImageExportCase {
  std::string label;
  std::string spec;                         // tests/models/data/<spec>.toml
  std::function<test::ImageModel()> build;  // initialised here
  std::vector<int64_t> images;              // [B, C, H, W]
};

void PrintTo(const ImageExportCase& c, std::ostream* out) {
  *out << c.label;
}

class ImageExport : public testing::TestWithParam<ImageExportCase> {};

// A model saved here loads with <Model>ForImageClassification.from_pretrained, same logits.
TEST_P(ImageExport, SavedCheckpointLoadsInTransformers) {
  const ImageExportCase& c = GetParam();
  const test::ImageModel model = c.build();
  EXPECT_TRUE(test::loads_in_transformers(*model.module,
                                          model.classify,
                                          test::tiny_spec(c.spec),
                                          at::randn(c.images),
                                          kLogitTolerance));
}

test::ImageModel convnext_every_block_showing() {
  ConvnextOptions options = test::tiny_convnext_options();
  options.layer_scale_init = 0.5;  // so that every block shows in the logits
  torch::manual_seed(0);
  return test::image_model(ConvnextForImageClassification(options));
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    ImageExport,
    testing::Values(
        ImageExportCase{
            "vit", "tiny-vit", [] { return test::image_model(test::tiny_vit()); }, {2, 3, 16, 16}},
        ImageExportCase{"convnext", "tiny-convnext", convnext_every_block_showing, {2, 3, 64, 64}}),
    test::case_label);

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

struct MismatchCase {
  std::string label;
  std::function<std::string()> write;  // writes the checkpoint, returns its path
  std::function<std::shared_ptr<torch::nn::Module>()> target;  // built after `write`
  // The message of loading `path` into `target`, or "(no error)".
  std::function<std::string(torch::nn::Module& target, const std::string& path)> load_error;
  std::vector<std::string> parts;  // each must appear in the message
  std::string watched;             // a parameter of the target that must not change
};

void PrintTo(const MismatchCase& c, std::ostream* out) {
  *out << c.label;
}

class CheckpointMismatch : public testing::TestWithParam<MismatchCase> {};

TEST_P(CheckpointMismatch, EveryProblemIsListedAndNothingIsLoaded) {
  const MismatchCase& c = GetParam();
  const std::string path = c.write();
  const std::shared_ptr<torch::nn::Module> target = c.target();
  const at::Tensor before = target->named_parameters()[c.watched].clone();
  const std::string error = c.load_error(*target, path);
  for (const std::string& part : c.parts) {
    EXPECT_NE(error.find(part), std::string::npos) << "expected '" << part << "' in: " << error;
  }
  EXPECT_TRUE(at::equal(before, target->named_parameters()[c.watched]));
}

// All-or-nothing loading in our own names; any exception's message.
std::string plain_load_error(torch::nn::Module& target, const std::string& path) {
  return test::error_of([&] { load_safetensors(target, path); });
}

// Loading with transformers' extras allowed; InputError's message.
std::string mamba_load_error(torch::nn::Module& target, const std::string& path) {
  return test::error_of<InputError>(
      [&] { load_safetensors(target, path, hf_load_options(Family::kMamba)); });
}

// The tiny ViT's state without the class token and with a pooler bias; 12 labels expected.
std::string vit_partial() {
  VitForImageClassification model = test::tiny_vit();
  const std::string path = test::scratch_dir("vit-ckpt") + "/model.safetensors";
  NamedTensors state = named_state(*model);
  state.erase(std::find_if(state.begin(), state.end(), [](const auto& t) {
    return t.first == "vit.embeddings.cls_token";
  }));
  state.emplace_back("vit.pooler.dense.bias", at::randn({32}));
  write_safetensors(path, state);
  return path;
}

std::shared_ptr<torch::nn::Module> vit_with_12_labels() {
  ModelSpec other = test::tiny_spec("tiny-vit");
  other.arch.num_labels = 12;
  return VitForImageClassification(vit_options(other, at::TensorOptions())).ptr();
}

std::string convnext_saved() {
  ConvnextForImageClassification model = test::tiny_convnext();
  const std::string path = test::scratch_dir("convnext-ckpt") + "/model.safetensors";
  save_safetensors(*model, path);
  return path;
}

std::shared_ptr<torch::nn::Module> convnext_deeper_and_wider() {
  ConvnextOptions options = test::tiny_convnext_options();
  options.depths = {2, 1, 3, 1};     // one more block in stage 2
  options.hidden_sizes.back() = 40;  // wider last stage
  return ConvnextForImageClassification(options).ptr();
}

// The tiny Mamba's state without two tensors.
std::string mamba_partial() {
  MambaForCausalLM source(mamba_options(test::tiny_spec("tiny-mamba"), at::TensorOptions()));
  NamedTensors state = named_state(*source);
  std::erase_if(state, [](const auto& item) {
    return item.first == "backbone.layers.1.mixer.D" || item.first == "backbone.norm_f.weight";
  });
  const std::string dir = test::scratch_dir("mamba-ckpt");
  write_safetensors(dir + "/partial.safetensors", state);
  return dir + "/partial.safetensors";
}

std::shared_ptr<torch::nn::Module> mamba_smaller_state() {
  ModelSpec wider = test::tiny_spec("tiny-mamba");
  wider.arch.d_state = 8;  // A_log [64, 8] and x_proj [4 + 16, 64] no longer fit
  return MambaForCausalLM(mamba_options(wider, at::TensorOptions())).ptr();
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    CheckpointMismatch,
    testing::Values(
        MismatchCase{"vit",
                     vit_partial,
                     vit_with_12_labels,
                     plain_load_error,
                     {"missing [vit.embeddings.cls_token]",
                      "unexpected [vit.pooler.dense.bias]",
                      "classifier.weight is [10, 32], model needs [12, 32]",
                      "classifier.bias is [10]"},
                     "classifier.weight"},
        MismatchCase{"convnext",
                     convnext_saved,
                     convnext_deeper_and_wider,
                     plain_load_error,
                     {"missing [convnext.encoder.stages.2.layers.2.",
                      "convnext.encoder.stages.2.layers.2.dwconv.weight,",
                      "convnext.encoder.stages.3.downsampling_layer.1.weight is [32, 24, 2, 2], "
                      "model needs [40, 24, 2, 2]",
                      "classifier.weight is [10, 32], model needs [10, 40]"},
                     "classifier.weight"},
        MismatchCase{"mamba",
                     mamba_partial,
                     mamba_smaller_state,
                     mamba_load_error,
                     {"missing [backbone.layers.1.mixer.D, backbone.norm_f.weight]",
                      "backbone.layers.0.mixer.A_log is [64, 16], model needs [64, 8]",
                      "backbone.layers.1.mixer.x_proj.weight is [36, 64], model needs [20, 64]"},
                     "backbone.embeddings.weight"}),
    test::case_label);

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
  EXPECT_EQ(mamba_load_error(*target, path), "(no error)");
  EXPECT_TRUE(target->named_parameters()["backbone.embeddings.weight"].equal(
      source->named_parameters()["backbone.embeddings.weight"]));
}

}  // namespace
}  // namespace gpudays::models
