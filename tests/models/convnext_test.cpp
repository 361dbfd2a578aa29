// ConvNeXt tests: HF parameter names and shapes, full-size parameter counts on the meta device,
// parity with transformers (logits, loss, every gradient), fp64 finite differences, a falling loss
// on synthetic images, drop path, checkpoint mismatches and the export to transformers.
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "models/checkpoint.h"
#include "models/convnext.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/safetensors.h"
#include "models/zoo.h"
#include "torch_test_util.h"
#include "vision_test_util.h"

namespace gpudays::models {
namespace {

ConvnextOptions tiny_options(at::ScalarType dtype = at::kFloat) {
  return convnext_options(test::tiny_spec("tiny-convnext"), at::TensorOptions().dtype(dtype));
}

ConvnextForImageClassification tiny_model(at::ScalarType dtype = at::kFloat) {
  torch::manual_seed(0);
  return ConvnextForImageClassification(tiny_options(dtype));
}

test::ImageClassifier classifier_of(ConvnextForImageClassification model) {
  return [model](const at::Tensor& images) mutable { return model->forward(images); };
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Convnext, ParameterNamesAndShapesAreHuggingFaces) {
  ConvnextForImageClassification model = tiny_model();
  const auto params = model->named_parameters();
  // stem 4, 9 per block x 6 blocks, 4 per downsampling x 3, final norm 2, classifier 2
  EXPECT_EQ(params.size(), 4 + 9 * 6 + 4 * 3 + 2 + 2u);
  const auto shape = [&](const char* name) { return params[name].sizes().vec(); };
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(shape("convnext.embeddings.patch_embeddings.weight"), (Shape{8, 3, 4, 4}));
  EXPECT_EQ(shape("convnext.embeddings.layernorm.bias"), (Shape{8}));
  EXPECT_EQ(shape("convnext.encoder.stages.0.layers.1.dwconv.weight"), (Shape{8, 1, 7, 7}));
  EXPECT_EQ(shape("convnext.encoder.stages.2.layers.0.layernorm.weight"), (Shape{24}));
  EXPECT_EQ(shape("convnext.encoder.stages.2.layers.1.pwconv1.weight"), (Shape{96, 24}));
  EXPECT_EQ(shape("convnext.encoder.stages.2.layers.1.pwconv2.bias"), (Shape{24}));
  EXPECT_EQ(shape("convnext.encoder.stages.3.layers.0.layer_scale_parameter"), (Shape{32}));
  EXPECT_EQ(shape("convnext.encoder.stages.1.downsampling_layer.0.weight"), (Shape{8}));
  EXPECT_EQ(shape("convnext.encoder.stages.1.downsampling_layer.1.weight"), (Shape{16, 8, 2, 2}));
  EXPECT_EQ(shape("convnext.layernorm.weight"), (Shape{32}));
  EXPECT_EQ(shape("classifier.weight"), (Shape{10, 32}));
  EXPECT_EQ(params.find("convnext.encoder.stages.0.downsampling_layer.0.weight"), nullptr);
  EXPECT_EQ(model->forward(at::randn({3, 3, 64, 64})).sizes(), (at::IntArrayRef{3, 10}));
}

// HF num_parameters() of ConvNextForImageClassification (transformers 5.24.0, meta device) for
// every catalog ConvNeXt; the planner's count_params must agree too.
TEST(Convnext, FullSizeParameterCountsOnTheMetaDeviceEqualHuggingFaceAndPlanner) {
  const std::map<std::string, int64_t> hf = {{"convnext-large-1k", 197767336},
                                             {"convnext-large-22k", 229799953},
                                             {"convnext-xlarge-22k", 392900177}};
  const Catalog catalog = Catalog::load({});
  int checked = 0;
  for (const ModelSpec& spec : catalog.models()) {
    if (spec.family != Family::kConvnext) continue;
    ConvnextForImageClassification model(
        convnext_options(spec, at::TensorOptions().device(at::kMeta)));
    for (const at::Tensor& p : model->parameters()) ASSERT_TRUE(p.is_meta()) << spec.name;
    EXPECT_EQ(count_parameters(*model), hf.at(spec.name)) << spec.name;
    EXPECT_EQ(count_parameters(*model), count_params(spec).total) << spec.name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

class ConvnextParity : public testing::TestWithParam<at::DeviceType> {};

TEST_P(ConvnextParity, LogitsLossAndEveryGradientMatchTransformers) {
  const at::DeviceType device = GetParam();
  if (device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  ConvnextForImageClassification model(tiny_options());
  const test::ParityReport r =
      test::compare_with_fixture(*model, classifier_of(model), "tiny-convnext", device);
  EXPECT_LT(r.logit_diff, 1e-5);
  EXPECT_LT(r.loss_diff, 1e-5);
  EXPECT_LT(r.worst_grad, 1e-4) << r.worst_grad_name;
  EXPECT_EQ(r.checked, r.reference_grads) << "every reference gradient is checked";
  std::cout << fmt::format(
      "[parity] tiny-convnext {}: logits max abs diff {:.3g}, loss diff "
      "{:.3g}, gradients max rel diff {:.3g} ({})\n",
      at::DeviceTypeName(device, /*lower_case=*/true),
      r.logit_diff,
      r.loss_diff,
      r.worst_grad,
      r.worst_grad_name);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, ConvnextParity, testing::Values(at::kCPU, at::kCUDA), [](const auto& info) {
      return std::string(info.param == at::kCUDA ? "tiny_convnext_CUDA" : "tiny_convnext");
    });

// Directional central differences in fp64 (h = 1e-6, error O(h^2)) against autograd.
TEST(Convnext, GradientsMatchFiniteDifferencesInDouble) {
  ConvnextOptions options = tiny_options(at::kDouble);
  options.layer_scale_init = 0.5;  // blocks contribute visibly (1e-6 would hide their errors)
  torch::manual_seed(0);
  ConvnextForImageClassification model(options);
  model->eval();
  const at::Tensor images = at::randn({2, 3, 64, 64}, at::TensorOptions().dtype(at::kDouble));
  const at::Tensor labels = at::tensor({3, 7}, at::kLong);
  const auto [error, name] = test::worst_finite_difference_error(
      *model, [&] { return classification_loss(model->forward(images), labels); }, 1e-6);
  EXPECT_LT(error, 1e-7) << name;
  std::cout << "[finite differences] worst error " << error << " (" << name << ")\n";
}

// Random images with random labels (the zoo's synthetic batch, as the reference benchmarks): a
// fixed batch of 8 is learnable by memorising it. Adam, 40 steps.
TEST(Convnext, LossFallsOnASyntheticImageTask) {
  const ModelSpec spec = test::tiny_spec("tiny-convnext");
  ConvnextForImageClassification model = tiny_model();
  SyntheticOptions synthetic;
  synthetic.batch_size = 8;
  const Batch batch = synthetic_batch(spec, synthetic);
  ASSERT_EQ(batch.pixel_values.sizes(), (at::IntArrayRef{8, 3, 64, 64}));
  const auto [first, last] = test::train_fixed_batch(
      *model,
      [&] { return classification_loss(model->forward(batch.pixel_values), batch.labels); },
      /*steps=*/40,
      /*lr=*/3e-3);
  EXPECT_NEAR(first, std::log(10.0), 0.5) << "an untrained model is near-uniform";
  EXPECT_LT(last, 0.2 * first);
  std::cout << "[synthetic task] loss " << first << " -> " << last << " in 40 steps\n";
}

// Through the zoo's one interface (as the benchmark and trainer drive it): a training step on a
// synthetic batch gives [B, num_labels] logits, a near-uniform loss and finite gradients.
TEST(Convnext, TheZooBuildsItAndTakesATrainingStep) {
  const ModelSpec spec = test::tiny_spec("tiny-convnext");
  torch::manual_seed(0);
  ZooModel model = make_model(spec, {.attention = AttentionKind::kFused, .param_options = {}});
  SyntheticOptions synthetic;
  synthetic.batch_size = 3;
  const Batch batch = synthetic_batch(spec, synthetic);
  const at::Tensor logits = model.logits(batch);
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{3, 10}));
  const at::Tensor loss = model.loss(logits, batch);
  EXPECT_NEAR(loss.item<double>(), std::log(10.0), 0.5);
  loss.backward();
  for (const auto& p : model.module().named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

TEST(Convnext, DropPathActsInTrainingOnly) {
  ConvnextOptions options = tiny_options();
  options.drop_path_rate = 0.5;
  options.layer_scale_init = 1.0;  // make the dropped branches matter
  torch::manual_seed(0);
  ConvnextForImageClassification model(options);
  const at::Tensor images = at::randn({4, 3, 64, 64});
  EXPECT_FALSE(at::allclose(model->forward(images), model->forward(images)));
  model->eval();
  EXPECT_TRUE(at::allclose(model->forward(images), model->forward(images), 0, 0));
}

TEST(ConvnextExport, ConfigJsonAgreesWithTransformers) {
  const ModelSpec spec = test::tiny_spec("tiny-convnext");
  const nlohmann::json ours = hf_config_json(spec);
  std::ifstream in(test::fixture_path(spec.name, "config.json"));
  const nlohmann::json theirs = nlohmann::json::parse(in);
  for (const char* key : {"architectures",
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
                          "drop_path_rate"}) {
    EXPECT_EQ(ours.at(key), theirs.at(key)) << key;
  }
  EXPECT_EQ(ours.at("num_labels"), theirs.at("id2label").size());
}

// A model saved here loads with ConvNextForImageClassification.from_pretrained, same logits.
TEST(ConvnextExport, SavedCheckpointLoadsInTransformers) {
  ConvnextOptions options = tiny_options();
  options.layer_scale_init = 0.5;  // so that every block shows in the logits
  torch::manual_seed(0);
  ConvnextForImageClassification model(options);
  EXPECT_TRUE(test::loads_in_transformers(*model,
                                          classifier_of(model),
                                          test::tiny_spec("tiny-convnext"),
                                          at::randn({2, 3, 64, 64}),
                                          /*tolerance=*/1e-5));
}

TEST(Convnext, CheckpointMismatchesAreListedAndNothingIsLoaded) {
  ConvnextForImageClassification model = tiny_model();
  const std::string path = test::scratch_dir("convnext-ckpt") + "/model.safetensors";
  save_safetensors(*model, path);
  ConvnextOptions options = tiny_options();
  options.depths = {2, 1, 3, 1};     // one more block in stage 2
  options.hidden_sizes.back() = 40;  // wider last stage
  ConvnextForImageClassification target(options);
  const at::Tensor before = target->named_parameters()["classifier.weight"].clone();
  const std::string error = error_of([&] { load_safetensors(*target, path); });
  EXPECT_NE(error.find("missing [convnext.encoder.stages.2.layers.2."), std::string::npos) << error;
  EXPECT_NE(error.find("convnext.encoder.stages.2.layers.2.dwconv.weight,"), std::string::npos)
      << error;
  EXPECT_NE(error.find("convnext.encoder.stages.3.downsampling_layer.1.weight is [32, 24, 2, 2], "
                       "model needs [40, 24, 2, 2]"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("classifier.weight is [10, 32], model needs [10, 40]"), std::string::npos)
      << error;
  EXPECT_TRUE(at::equal(before, target->named_parameters()["classifier.weight"]));
}

TEST(Convnext, RejectsOtherFamiliesInconsistentShapesAndWrongImages) {
  const ModelSpec vit = Catalog::load({}).model("vit");
  EXPECT_NE(error_of([&] { convnext_options(vit, {}); }).find("not convnext"), std::string::npos);
  ModelSpec spec = test::tiny_spec("tiny-convnext");
  spec.arch.hidden_sizes.pop_back();  // 4 depths, 3 widths
  EXPECT_NE(error_of([&] { convnext_options(spec, {}); }).find("hidden_sizes"), std::string::npos);
  spec = test::tiny_spec("tiny-convnext");
  spec.arch.image_size = 48;  // not a multiple of the total stride 32
  EXPECT_NE(error_of([&] { convnext_options(spec, {}); }).find("image_size"), std::string::npos);
  ConvnextForImageClassification model = tiny_model();
  EXPECT_NE(error_of([&] {
              model->forward(at::randn({2, 1, 64, 64}));
            }).find("convnext: images must be [B, 3, H, W]"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudays::models
