// Mamba unit tests: HF initialisation, plain vs fused scan in the whole model, autocast and bf16
// parameters. Parity with transformers is in parity_test.cpp, checkpoints in
// family_checkpoint_test.cpp, parameter names in family_names_test.cpp; the parameter count,
// causality, finite differences, the synthetic task, the zoo step and bad specs in family_test.cpp
// and family_behaviour_test.cpp.
#include <ATen/autocast_mode.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/log.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/softplus.h>
#include <gtest/gtest.h>

#include "family_test_util.h"
#include "models/losses.h"
#include "models/mamba.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

// As MambaPreTrainedModel._init_weights: A = -(1..N), D = 1, softplus(dt bias) in [1e-3, 0.1],
// dt_proj weight U(+-dt_rank^-0.5), conv and out_proj kaiming-uniform, the rest N(0, 0.1).
TEST(Mamba, InitialisationIsHuggingFaces) {
  MambaForCausalLM model = test::tiny_mamba();
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

// The two scans in the whole model, same weights and input. Per layer they differ by rounding
// only (see selective_scan_test.cpp); through two layers and the head: 1e-5 absolute on logits of
// magnitude ~1 in fp32, 1e-12 in fp64. Gradients: 1e-4 relative (fp32), 1e-10 (fp64).
TEST(Mamba, PlainAndFusedScansAgreeInTheModel) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    MambaForCausalLM model = test::tiny_mamba(dtype);
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

// Mixed precision comes from outside (the engine's autocast) or from bf16 parameters; the scan,
// the norms, the residual stream and the logits stay in fp32, as HF's. The loss stays within
// bf16 rounding of the fp32 one (tolerance 5e-2 on ~5; observed below 1e-3).
TEST(Mamba, RunsUnderAutocastAndWithBfloat16Parameters) {
  MambaForCausalLM model = test::tiny_mamba();
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

}  // namespace
}  // namespace gpudays::models
