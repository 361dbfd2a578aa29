// GPT-NeoX unit tests: HF parameter names and shapes, full-size parameter counts on the meta device,
// plain vs fused attention, causality, a double-precision finite-difference gradient check, and a
// loss that falls on a learnable synthetic task. Parity with transformers is in parity_test.cpp.
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn_like.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "models/gpt_neox.h"
#include "models/losses.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

GptNeoxForCausalLM tiny_model(at::ScalarType dtype = at::kFloat) {
  torch::manual_seed(0);
  return GptNeoxForCausalLM(
      gpt_neox_options(test::tiny_spec("tiny-gpt-neox"), at::TensorOptions().dtype(dtype)));
}

TEST(GptNeox, ParameterNamesAndShapesAreHuggingFaces) {
  GptNeoxForCausalLM model = tiny_model();
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), 1 + 2 * 12 + 2 + 1u);  // embed_in, 12 per layer, final norm, embed_out
  EXPECT_EQ(params["gpt_neox.embed_in.weight"].sizes(), (at::IntArrayRef{96, 64}));
  EXPECT_EQ(params["gpt_neox.layers.1.attention.query_key_value.weight"].sizes(),
            (at::IntArrayRef{192, 64}));
  EXPECT_EQ(params["gpt_neox.layers.0.mlp.dense_h_to_4h.bias"].sizes(), (at::IntArrayRef{256}));
  EXPECT_EQ(params["gpt_neox.layers.0.post_attention_layernorm.weight"].sizes(),
            (at::IntArrayRef{64}));
  EXPECT_EQ(params["gpt_neox.final_layer_norm.bias"].sizes(), (at::IntArrayRef{64}));
  EXPECT_EQ(params["embed_out.weight"].sizes(), (at::IntArrayRef{96, 64}));
  const at::Tensor tokens = at::randint(96, {3, 16});
  EXPECT_EQ(model->forward(tokens).sizes(), (at::IntArrayRef{3, 16, 96}));
}

// HF num_parameters() of GPTNeoXForCausalLM for each Pythia configuration (transformers 5.24.0,
// meta device); the planner's count_params must agree too.
TEST(GptNeox, FullSizeParameterCountsOnTheMetaDeviceEqualHuggingFaceAndPlanner) {
  const std::map<std::string, int64_t> hf = {
      {"pythia-14m", 14067712},     {"pythia-31m", 30494720},    {"pythia-70m", 70426624},
      {"pythia-160m", 162322944},   {"pythia-410m", 405334016},  {"pythia-1b", 1011781632},
      {"pythia-1.4b", 1414647808},  {"pythia-2.8b", 2775208960}, {"pythia-6.9b", 6857302016},
      {"pythia-12b", 11846072320}};
  const Catalog catalog = Catalog::load({});
  int checked = 0;
  for (const ModelSpec& spec : catalog.models()) {
    if (spec.family != Family::kGptNeox) continue;
    GptNeoxForCausalLM model(gpt_neox_options(spec, at::TensorOptions().device(at::kMeta)));
    for (const at::Tensor& p : model->parameters()) ASSERT_TRUE(p.is_meta()) << spec.name;
    EXPECT_EQ(count_parameters(*model), hf.at(spec.name)) << spec.name;
    EXPECT_EQ(count_parameters(*model), count_params(spec).total) << spec.name;
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

// Same weights, same input: the two attention paths compute the same maths in a different order.
// Tolerance 1e-5 absolute on logits of magnitude ~1 in fp32 (a few ulps per op); 1e-12 in fp64.
TEST(GptNeox, PlainAndFusedAttentionAgree) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    GptNeoxForCausalLM model = tiny_model(dtype);
    const at::Tensor tokens = at::randint(96, {2, 16});
    model->set_attention(AttentionKind::kPlain);
    const at::Tensor plain = model->forward(tokens);
    model->set_attention(AttentionKind::kFused);
    const at::Tensor fused = model->forward(tokens);
    const double diff = test::max_abs_diff(plain, fused);
    EXPECT_LT(diff, dtype == at::kFloat ? 1e-5 : 1e-12);
    std::cout << "[plain vs fused] " << c10::toString(dtype) << ": max abs diff " << diff << "\n";
  }
}

TEST(GptNeox, FutureTokensDoNotChangeEarlierLogits) {
  GptNeoxForCausalLM model = tiny_model();
  for (const auto kind : {AttentionKind::kPlain, AttentionKind::kFused}) {
    model->set_attention(kind);
    const at::Tensor tokens = at::randint(96, {1, 16});
    at::Tensor changed = tokens.clone();
    changed.narrow(1, 10, 6).random_(96);
    const at::Tensor a = model->forward(tokens);
    const at::Tensor b = model->forward(changed);
    EXPECT_TRUE(at::allclose(a.narrow(1, 0, 10), b.narrow(1, 0, 10), 0, 0)) << to_string(kind);
    EXPECT_FALSE(at::allclose(a.narrow(1, 10, 6), b.narrow(1, 10, 6))) << to_string(kind);
  }
}

// Directional finite differences in fp64, one random direction per parameter tensor:
// (L(p + h v) - L(p - h v)) / 2h must equal <dL/dp, v> (central differences: error O(h^2)).
TEST(GptNeox, GradientsMatchFiniteDifferencesInDouble) {
  GptNeoxForCausalLM model = tiny_model(at::kDouble);
  const at::Tensor tokens = at::randint(96, {2, 8});
  causal_lm_loss(model->forward(tokens), tokens).backward();
  const double h = 1e-6;
  double worst = 0;
  for (const auto& item : model->named_parameters()) {
    at::Tensor p = item.value();
    const at::Tensor v = at::randn_like(p);
    const double analytic = (p.grad() * v).sum().item<double>();
    double numeric = 0;
    {
      at::NoGradGuard no_grad;
      p.add_(v, h);
      const double up = causal_lm_loss(model->forward(tokens), tokens).item<double>();
      p.add_(v, -2 * h);
      const double down = causal_lm_loss(model->forward(tokens), tokens).item<double>();
      p.add_(v, h);
      numeric = (up - down) / (2 * h);
    }
    const double error = std::abs(numeric - analytic) / std::max(1.0, std::abs(analytic));
    EXPECT_LT(error, 1e-7) << item.key() << ": numeric " << numeric << ", analytic " << analytic;
    worst = std::max(worst, error);
  }
  std::cout << "[finite differences] worst error " << worst << "\n";
}

// A learnable synthetic task: each sequence counts upwards modulo the vocabulary from a random
// start, so every next token is predictable from the current one. Adam, 40 steps.
TEST(GptNeox, LossFallsOnALearnableSyntheticTask) {
  GptNeoxForCausalLM model = tiny_model();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  const at::Tensor starts = at::randint(96, {8, 1});
  const at::Tensor tokens = (starts + at::arange(16).view({1, 16})).remainder(96);
  double first = 0;
  double last = 0;
  for (int step = 0; step < 40; ++step) {
    optimizer.zero_grad();
    const at::Tensor loss = causal_lm_loss(model->forward(tokens), tokens);
    loss.backward();
    optimizer.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_NEAR(first, std::log(96.0), 0.5) << "an untrained model is near-uniform";
  EXPECT_LT(last, 0.2 * first);
  std::cout << "[synthetic task] loss " << first << " -> " << last << " in 40 steps\n";
}

TEST(GptNeox, RejectsOtherFamiliesAndInconsistentShapes) {
  const Catalog catalog = Catalog::load({});
  try {
    gpt_neox_options(catalog.model("roberta"), {});
    FAIL() << "a roberta spec must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not gpt_neox"), std::string::npos) << e.what();
  }
  ModelSpec spec = test::tiny_spec("tiny-gpt-neox");
  spec.arch.n_heads = 5;  // does not divide d_model 64
  try {
    gpt_neox_options(spec, {});
    FAIL() << "5 heads cannot split 64 channels";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("n_heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpudays::models
