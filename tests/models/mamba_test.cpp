// Mamba unit tests: HF parameter names, shapes and initialisation, the full-size parameter count on
// the meta device, plain vs fused scan in the whole model, causality, a double-precision
// finite-difference gradient check, a loss that falls on a learnable synthetic task, the zoo.
// Parity with transformers is in mamba_parity_test.cpp.
#include <ATen/autocast_mode.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/log.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn_like.h>
#include <ATen/ops/softplus.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "models/losses.h"
#include "models/mamba.h"
#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

MambaForCausalLM tiny_model(at::ScalarType dtype = at::kFloat, ScanKind scan = ScanKind::kPlain) {
  torch::manual_seed(0);
  MambaOptions options =
      mamba_options(test::tiny_spec("tiny-mamba"), at::TensorOptions().dtype(dtype));
  options.scan = scan;
  return MambaForCausalLM(options);
}

TEST(Mamba, ParameterNamesAndShapesAreHuggingFaces) {
  MambaForCausalLM model = tiny_model();
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), 1 + 2 * 10 + 1u);  // embeddings, 10 per layer, norm_f; lm_head is tied
  const std::string mixer = "backbone.layers.1.mixer.";
  EXPECT_EQ(params["backbone.embeddings.weight"].sizes(), (at::IntArrayRef{96, 32}));
  EXPECT_EQ(params["backbone.layers.0.norm.weight"].sizes(), (at::IntArrayRef{32}));
  EXPECT_EQ(params[mixer + "in_proj.weight"].sizes(), (at::IntArrayRef{128, 32}));
  EXPECT_EQ(params[mixer + "conv1d.weight"].sizes(), (at::IntArrayRef{64, 1, 4}));
  EXPECT_EQ(params[mixer + "conv1d.bias"].sizes(), (at::IntArrayRef{64}));
  EXPECT_EQ(params[mixer + "x_proj.weight"].sizes(), (at::IntArrayRef{4 + 2 * 16, 64}));
  EXPECT_EQ(params[mixer + "dt_proj.weight"].sizes(), (at::IntArrayRef{64, 4}));
  EXPECT_EQ(params[mixer + "dt_proj.bias"].sizes(), (at::IntArrayRef{64}));
  EXPECT_EQ(params[mixer + "A_log"].sizes(), (at::IntArrayRef{64, 16}));
  EXPECT_EQ(params[mixer + "D"].sizes(), (at::IntArrayRef{64}));
  EXPECT_EQ(params[mixer + "out_proj.weight"].sizes(), (at::IntArrayRef{32, 64}));
  EXPECT_EQ(params["backbone.norm_f.weight"].sizes(), (at::IntArrayRef{32}));
  EXPECT_FALSE(params.contains(mixer + "in_proj.bias"));  // proj_bias = false
  const at::Tensor tokens = at::randint(96, {3, 24});
  EXPECT_EQ(model->forward(tokens).sizes(), (at::IntArrayRef{3, 24, 96}));
}

// As MambaPreTrainedModel._init_weights: A = -(1..N), D = 1, softplus(dt bias) in [1e-3, 0.1],
// dt_proj weight U(+-dt_rank^-0.5), conv and out_proj kaiming-uniform, the rest N(0, 0.1).
TEST(Mamba, InitialisationIsHuggingFaces) {
  MambaForCausalLM model = tiny_model();
  auto params = model->named_parameters();
  const std::string mixer = "backbone.layers.0.mixer.";
  const at::Tensor expected_a_log = at::log(at::arange(1, 17, at::kFloat)).expand({64, 16});
  EXPECT_TRUE(at::allclose(params[mixer + "A_log"], expected_a_log, 0, 0));
  EXPECT_EQ(params[mixer + "D"].min().item<float>(), 1.0f);
  const at::Tensor dt = at::softplus(params[mixer + "dt_proj.bias"]);
  EXPECT_GE(dt.min().item<double>(), 1e-3 * (1 - 1e-5));
  EXPECT_LE(dt.max().item<double>(), 0.1 * (1 + 1e-5));
  EXPECT_LE(params[mixer + "dt_proj.weight"].abs().max().item<double>(), 0.5);     // 4^-0.5
  EXPECT_LE(params[mixer + "conv1d.weight"].abs().max().item<double>(), 0.5);      // 1/sqrt(4)
  EXPECT_LE(params[mixer + "out_proj.weight"].abs().max().item<double>(), 0.125);  // 1/sqrt(64)
  EXPECT_NEAR(params[mixer + "in_proj.weight"].std().item<double>(), 0.1, 0.01);
  EXPECT_NEAR(params["backbone.embeddings.weight"].std().item<double>(), 0.1, 0.01);
  EXPECT_EQ(params[mixer + "conv1d.bias"].abs().max().item<float>(), 0.0f);
}

// HF num_parameters() of MambaForCausalLM for state-spaces/mamba-2.8b-hf's configuration
// (transformers 5.24.0, meta device): 2,768,345,600; the planner's count_params must agree.
TEST(Mamba, FullSizeParameterCountOnTheMetaDeviceEqualsHuggingFaceAndPlanner) {
  const ModelSpec spec = Catalog::load({}).model("mamba");
  MambaForCausalLM model(mamba_options(spec, at::TensorOptions().device(at::kMeta)));
  for (const at::Tensor& p : model->parameters()) ASSERT_TRUE(p.is_meta());
  EXPECT_EQ(count_parameters(*model), 2768345600);
  EXPECT_EQ(count_parameters(*model), count_params(spec).total);
}

// The two scans in the whole model, same weights and input. Per layer they differ by rounding
// only (see selective_scan_test.cpp); through two layers and the head: 1e-5 absolute on logits of
// magnitude ~1 in fp32, 1e-12 in fp64. Gradients: 1e-4 relative (fp32), 1e-10 (fp64).
TEST(Mamba, PlainAndFusedScansAgreeInTheModel) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    MambaForCausalLM model = tiny_model(dtype);
    const at::Tensor tokens = at::randint(96, {2, 24});
    std::map<ScanKind, std::pair<at::Tensor, std::vector<at::Tensor>>> results;
    for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
      model->set_scan(kind);
      model->zero_grad();
      const at::Tensor logits = model->forward(tokens);
      causal_lm_loss(logits, tokens).backward();
      std::vector<at::Tensor> grads;
      for (const at::Tensor& p : model->parameters()) grads.push_back(p.grad().clone());
      results[kind] = {logits.detach(), grads};
    }
    const auto& [plain_logits, plain_grads] = results[ScanKind::kPlain];
    const auto& [fused_logits, fused_grads] = results[ScanKind::kFused];
    const double logit_diff = test::max_abs_diff(plain_logits, fused_logits);
    EXPECT_LT(logit_diff, dtype == at::kFloat ? 1e-5 : 1e-12);
    double worst = 0;
    for (size_t i = 0; i < plain_grads.size(); ++i) {
      worst = std::max(worst, test::max_rel_diff(fused_grads[i], plain_grads[i]));
    }
    EXPECT_LT(worst, dtype == at::kFloat ? 1e-4 : 1e-10);
    std::cout << "[plain vs fused scan, model] " << c10::toString(dtype) << ": logits max abs diff "
              << logit_diff << ", gradients max rel diff " << worst << "\n";
  }
}

TEST(Mamba, FutureTokensDoNotChangeEarlierLogits) {
  MambaForCausalLM model = tiny_model();
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    model->set_scan(kind);
    const at::Tensor tokens = at::randint(96, {1, 24});
    at::Tensor changed = tokens.clone();
    changed.narrow(1, 10, 14).random_(96);
    const at::Tensor a = model->forward(tokens);
    const at::Tensor b = model->forward(changed);
    EXPECT_TRUE(at::allclose(a.narrow(1, 0, 10), b.narrow(1, 0, 10), 0, 0)) << to_string(kind);
    EXPECT_FALSE(at::allclose(a.narrow(1, 10, 14), b.narrow(1, 10, 14))) << to_string(kind);
  }
}

// Directional finite differences in fp64 through the whole model, for each scan, one random
// direction per parameter tensor: (L(p + h v) - L(p - h v)) / 2h against <dL/dp, v>.
TEST(Mamba, GradientsMatchFiniteDifferencesInDouble) {
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    MambaForCausalLM model = tiny_model(at::kDouble, kind);
    const at::Tensor tokens = at::randint(96, {2, 12});
    causal_lm_loss(model->forward(tokens), tokens).backward();
    const double h = 1e-6;
    double worst = 0;
    for (const auto& item : model->named_parameters()) {
      at::Tensor p = item.value();
      const at::Tensor v = at::randn_like(p);
      const double analytic = (p.grad() * v).sum().item<double>();
      at::NoGradGuard no_grad;
      p.add_(v, h);
      const double up = causal_lm_loss(model->forward(tokens), tokens).item<double>();
      p.add_(v, -2 * h);
      const double down = causal_lm_loss(model->forward(tokens), tokens).item<double>();
      p.add_(v, h);
      const double numeric = (up - down) / (2 * h);
      const double error = std::abs(numeric - analytic) / std::max(1.0, std::abs(analytic));
      EXPECT_LT(error, 1e-7) << item.key() << ": numeric " << numeric << ", analytic " << analytic;
      worst = std::max(worst, error);
    }
    std::cout << "[finite differences] " << to_string(kind) << " scan: worst error " << worst
              << "\n";
  }
}

// A learnable synthetic task: each sequence counts upwards modulo the vocabulary from a random
// start, so every next token is predictable from the current one. AdamW, 40 steps, fused scan.
TEST(Mamba, LossFallsOnALearnableSyntheticTask) {
  MambaForCausalLM model = tiny_model(at::kFloat, ScanKind::kFused);
  torch::optim::AdamW optimizer(model->parameters(),
                                torch::optim::AdamWOptions(3e-3).weight_decay(0.0));
  const at::Tensor starts = at::randint(96, {8, 1});
  const at::Tensor tokens = (starts + at::arange(24).view({1, 24})).remainder(96);
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

// Mixed precision comes from outside (the engine's autocast) or from bf16 parameters; the scan,
// the norms, the residual stream and the logits stay in fp32, as HF's. The loss stays within
// bf16 rounding of the fp32 one (tolerance 5e-2 on ~5; observed below 1e-3).
TEST(Mamba, RunsUnderAutocastAndWithBfloat16Parameters) {
  MambaForCausalLM model = tiny_model();
  const at::Tensor tokens = at::randint(96, {2, 24});
  const double reference = causal_lm_loss(model->forward(tokens), tokens).item<double>();
  const auto check = [&](const at::Tensor& logits, const std::string& what) {
    EXPECT_EQ(logits.scalar_type(), at::kFloat) << what;
    const at::Tensor loss = causal_lm_loss(logits, tokens);
    loss.backward();
    EXPECT_NEAR(loss.item<double>(), reference, 5e-2) << what;
    std::cout << "[reduced precision] " << what << ": loss " << loss.item<double>() << " (fp32 "
              << reference << ")\n";
    for (const at::Tensor& p : model->parameters()) {
      EXPECT_TRUE(at::isfinite(p.grad()).all().item<bool>()) << what;
    }
    model->zero_grad();
  };
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    model->set_scan(kind);
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    const at::Tensor logits = model->forward(tokens);
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
    check(logits, "autocast bf16, " + to_string(kind));
  }
  model->to(at::kBFloat16);
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    model->set_scan(kind);
    check(model->forward(tokens), "bf16 parameters, " + to_string(kind));
  }
}

// Through the zoo (as the benchmark and the trainer drive it): a synthetic batch, a training step,
// every gradient defined and finite, for both scans.
TEST(Mamba, TakesATrainingStepThroughTheZoo) {
  const ModelSpec spec = test::tiny_spec("tiny-mamba");
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    torch::manual_seed(0);
    ZooModel model = make_model(spec, {.param_options = {}, .scan = kind});
    const Batch batch = synthetic_batch(spec, {.batch_size = 3});
    const at::Tensor logits = model.logits(batch);
    EXPECT_EQ(logits.sizes(), (at::IntArrayRef{3, spec.arch.seq_len, spec.arch.vocab_size}));
    const at::Tensor loss = model.loss(logits, batch);
    EXPECT_NEAR(loss.item<double>(), std::log(96.0), 0.5) << to_string(kind);
    loss.backward();
    for (const auto& p : model.module().named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
    }
  }
}

TEST(Mamba, RejectsOtherFamiliesAndBadShapes) {
  try {
    mamba_options(Catalog::load({}).model("pythia-70m"), {});
    FAIL() << "a gpt_neox spec must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not mamba"), std::string::npos) << e.what();
  }
  ModelSpec spec = test::tiny_spec("tiny-mamba");
  spec.arch.d_state = 0;
  try {
    mamba_options(spec, {});
    FAIL() << "a zero state size must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("d_state"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpudays::models
