// ViT tests: HF parameter names and shapes, the full-size parameter count on the meta device,
// parity with transformers (logits, loss, every gradient; plain and fused attention), plain vs
// fused, fp64 finite differences, a falling loss on synthetic images, dropout, checkpoints, export.
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/safetensors.h"
#include "models/vit.h"
#include "models/zoo.h"
#include "torch_test_util.h"
#include "vision_test_util.h"

namespace gpudays::models {
namespace {

VitForImageClassification tiny_model(at::ScalarType dtype = at::kFloat) {
  torch::manual_seed(0);
  return VitForImageClassification(
      vit_options(test::tiny_spec("tiny-vit"), at::TensorOptions().dtype(dtype)));
}

test::ImageClassifier classifier_of(VitForImageClassification model) {
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

TEST(Vit, ParameterNamesAndShapesAreHuggingFaces) {
  VitForImageClassification model = tiny_model();
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), 4 + 2 * 16 + 2 + 2u);  // embeddings, 16 per layer, final norm, head
  const auto shape = [&](const char* name) { return params[name].sizes().vec(); };
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(shape("vit.embeddings.cls_token"), (Shape{1, 1, 32}));
  EXPECT_EQ(shape("vit.embeddings.position_embeddings"), (Shape{1, 17, 32}));
  EXPECT_EQ(shape("vit.embeddings.patch_embeddings.projection.weight"), (Shape{32, 3, 4, 4}));
  EXPECT_EQ(shape("vit.encoder.layer.1.attention.attention.query.weight"), (Shape{32, 32}));
  EXPECT_EQ(shape("vit.encoder.layer.1.attention.attention.value.bias"), (Shape{32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.attention.output.dense.weight"), (Shape{32, 32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.intermediate.dense.weight"), (Shape{64, 32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.output.dense.weight"), (Shape{32, 64}));
  EXPECT_EQ(shape("vit.encoder.layer.0.layernorm_before.weight"), (Shape{32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.layernorm_after.bias"), (Shape{32}));
  EXPECT_EQ(shape("vit.layernorm.weight"), (Shape{32}));
  EXPECT_EQ(shape("classifier.weight"), (Shape{10, 32}));
  EXPECT_EQ(model->forward(at::randn({3, 3, 16, 16})).sizes(), (at::IntArrayRef{3, 10}));
}

// HF num_parameters() of ViTForImageClassification for the catalog's ViT-L/16 with 21841 labels
// (transformers 5.24.0, meta device); the planner's count_params must agree too.
TEST(Vit, FullSizeParameterCountOnTheMetaDeviceEqualsHuggingFaceAndPlanner) {
  const ModelSpec spec = Catalog::load({}).model("vit");
  VitForImageClassification model(vit_options(spec, at::TensorOptions().device(at::kMeta)));
  for (const at::Tensor& p : model->parameters()) ASSERT_TRUE(p.is_meta());
  EXPECT_EQ(count_parameters(*model), 325688657);
  EXPECT_EQ(count_parameters(*model), count_params(spec).total);
}

struct VitParityCase {
  AttentionKind attention;
  at::DeviceType device;
};

void PrintTo(const VitParityCase& c, std::ostream* out) {
  *out << to_string(c.attention) << " " << at::DeviceTypeName(c.device, /*lower_case=*/true);
}

class VitParity : public testing::TestWithParam<VitParityCase> {};

TEST_P(VitParity, LogitsLossAndEveryGradientMatchTransformers) {
  const auto [attention, device] = GetParam();
  if (device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  VitOptions options = vit_options(test::tiny_spec("tiny-vit"), at::TensorOptions());
  options.attention = attention;
  VitForImageClassification model(options);
  // Key biases add q.b_k to every score of a query: softmax ignores it, their exact gradient is 0.
  const auto key_bias = [](const std::string& name) {
    return name.ends_with("attention.attention.key.bias");
  };
  const test::ParityReport r =
      test::compare_with_fixture(*model, classifier_of(model), "tiny-vit", device, key_bias);
  EXPECT_LT(r.logit_diff, 1e-5);
  EXPECT_LT(r.loss_diff, 1e-5);
  EXPECT_LT(r.worst_grad, 1e-4) << r.worst_grad_name;
  EXPECT_LT(r.worst_zero_grad, 1e-6) << "key bias gradients are rounding noise on both sides";
  EXPECT_EQ(r.checked, r.reference_grads) << "every reference gradient is checked";
  std::cout << fmt::format(
      "[parity] tiny-vit {} {}: logits max abs diff {:.3g}, loss diff {:.3g}, gradients max rel "
      "diff {:.3g} ({}), key bias gradients {:.3g} of the largest\n",
      to_string(attention),
      at::DeviceTypeName(device, /*lower_case=*/true),
      r.logit_diff,
      r.loss_diff,
      r.worst_grad,
      r.worst_grad_name,
      r.worst_zero_grad);
}

INSTANTIATE_TEST_SUITE_P(Tiny,
                         VitParity,
                         testing::Values(VitParityCase{AttentionKind::kPlain, at::kCPU},
                                         VitParityCase{AttentionKind::kFused, at::kCPU},
                                         VitParityCase{AttentionKind::kFused, at::kCUDA}),
                         [](const testing::TestParamInfo<VitParityCase>& info) {
                           return to_string(info.param.attention) +
                                  (info.param.device == at::kCUDA ? "_CUDA" : "");
                         });

// Same weights, same images: the two attention paths compute the same maths in another order.
// Tolerance 1e-5 absolute on logits of magnitude ~1 in fp32 (a few ulps per op); 1e-12 in fp64.
TEST(Vit, PlainAndFusedAttentionAgree) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    VitForImageClassification model = tiny_model(dtype);
    model->eval();
    const at::Tensor images = at::randn({4, 3, 16, 16}, at::TensorOptions().dtype(dtype));
    model->set_attention(AttentionKind::kPlain);
    const at::Tensor plain = model->forward(images);
    model->set_attention(AttentionKind::kFused);
    const at::Tensor fused = model->forward(images);
    const double diff = test::max_abs_diff(plain, fused);
    EXPECT_LT(diff, dtype == at::kFloat ? 1e-5 : 1e-12);
    std::cout << "[plain vs fused] " << c10::toString(dtype) << ": max abs diff " << diff << "\n";
  }
}

// Directional central differences in fp64 (h = 1e-6, error O(h^2)) against autograd.
TEST(Vit, GradientsMatchFiniteDifferencesInDouble) {
  VitForImageClassification model = tiny_model(at::kDouble);
  model->eval();
  const at::Tensor images = at::randn({2, 3, 16, 16}, at::TensorOptions().dtype(at::kDouble));
  const at::Tensor labels = at::tensor({3, 7}, at::kLong);
  const auto [error, name] = test::worst_finite_difference_error(
      *model, [&] { return classification_loss(model->forward(images), labels); }, 1e-6);
  EXPECT_LT(error, 1e-7) << name;
  std::cout << "[finite differences] worst error " << error << " (" << name << ")\n";
}

// Random images with random labels (the zoo's synthetic batch, as the reference benchmarks): a
// fixed batch of 8 is learnable by memorising it. Adam, 40 steps, dropout on (training mode).
TEST(Vit, LossFallsOnASyntheticImageTask) {
  const ModelSpec spec = test::tiny_spec("tiny-vit");
  VitForImageClassification model = tiny_model();
  SyntheticOptions synthetic;
  synthetic.batch_size = 8;
  const Batch batch = synthetic_batch(spec, synthetic);
  ASSERT_EQ(batch.pixel_values.sizes(), (at::IntArrayRef{8, 3, 16, 16}));
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
TEST(Vit, TheZooBuildsItAndTakesATrainingStep) {
  const ModelSpec spec = test::tiny_spec("tiny-vit");
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

TEST(Vit, DropoutActsInTrainingOnly) {
  VitForImageClassification model = tiny_model();  // recipe dropout 0.1
  const at::Tensor images = at::randn({2, 3, 16, 16});
  EXPECT_FALSE(at::allclose(model->forward(images), model->forward(images)));
  model->eval();
  EXPECT_TRUE(at::allclose(model->forward(images), model->forward(images), 0, 0));
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(VitExport, ConfigJsonAgreesWithTransformers) {
  const ModelSpec spec = test::tiny_spec("tiny-vit");
  const nlohmann::json ours = hf_config_json(spec);
  const nlohmann::json theirs = read_json(test::fixture_path(spec.name, "config.json"));
  for (const char* key : {"architectures",
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
                          "layer_norm_eps"}) {
    EXPECT_EQ(ours.at(key), theirs.at(key)) << key;
  }
  EXPECT_EQ(ours.at("num_labels"), theirs.at("id2label").size());
}

// A model saved here loads with ViTForImageClassification.from_pretrained and gives our logits.
TEST(VitExport, SavedCheckpointLoadsInTransformers) {
  VitForImageClassification model = tiny_model();
  EXPECT_TRUE(test::loads_in_transformers(*model,
                                          classifier_of(model),
                                          test::tiny_spec("tiny-vit"),
                                          at::randn({2, 3, 16, 16}),
                                          /*tolerance=*/1e-5));
}

TEST(Vit, CheckpointMismatchesAreListedAndNothingIsLoaded) {
  VitForImageClassification model = tiny_model();
  const std::string path = test::scratch_dir("vit-ckpt") + "/model.safetensors";
  NamedTensors state = named_state(*model);
  state.erase(std::find_if(state.begin(), state.end(), [](const auto& t) {
    return t.first == "vit.embeddings.cls_token";
  }));
  state.emplace_back("vit.pooler.dense.bias", at::randn({32}));
  write_safetensors(path, state);
  ModelSpec other = test::tiny_spec("tiny-vit");
  other.arch.num_labels = 12;
  VitForImageClassification target(vit_options(other, at::TensorOptions()));
  const at::Tensor before = target->named_parameters()["classifier.weight"].clone();
  const std::string error = error_of([&] { load_safetensors(*target, path); });
  EXPECT_NE(error.find("missing [vit.embeddings.cls_token]"), std::string::npos) << error;
  EXPECT_NE(error.find("unexpected [vit.pooler.dense.bias]"), std::string::npos) << error;
  EXPECT_NE(error.find("classifier.weight is [10, 32], model needs [12, 32]"), std::string::npos)
      << error;
  EXPECT_NE(error.find("classifier.bias is [10]"), std::string::npos) << error;
  EXPECT_TRUE(at::equal(before, target->named_parameters()["classifier.weight"]));
}

TEST(Vit, RejectsOtherFamiliesInconsistentShapesAndWrongImages) {
  const ModelSpec convnext = Catalog::load({}).model("convnext-large-1k");
  EXPECT_NE(error_of([&] { vit_options(convnext, {}); }).find("not vit"), std::string::npos);
  ModelSpec spec = test::tiny_spec("tiny-vit");
  spec.arch.n_heads = 5;  // does not divide d_model 32
  EXPECT_NE(error_of([&] { vit_options(spec, {}); }).find("n_heads"), std::string::npos);
  spec = test::tiny_spec("tiny-vit");
  spec.arch.patch_size = 5;  // does not tile 16
  EXPECT_NE(error_of([&] { vit_options(spec, {}); }).find("image_size"), std::string::npos);
  VitForImageClassification model = tiny_model();
  EXPECT_NE(error_of([&] {
              model->forward(at::randn({2, 3, 32, 32}));
            }).find("vit: images must be [B, 3, 16, 16]"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudays::models
