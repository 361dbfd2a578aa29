// Adam/AdamW: a hand-computed step, the fused kernel against the plain loop, and the plain loop
// against LibTorch's own torch::optim implementation (written by PyTorch, not here).
#include <gtest/gtest.h>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <ATen/ATen.h>

#include "engine/adam.h"

namespace gpudays {
namespace {

std::vector<at::Tensor> make_params(int64_t seed) {
  at::manual_seed(seed);
  return {at::randn({7, 5}), at::randn({5}), at::randn({3, 4, 2})};
}

void set_grads(std::vector<at::Tensor>& params, int64_t step) {
  at::manual_seed(1000 + step);
  for (at::Tensor& p : params) p.mutable_grad() = at::randn_like(p);
}

double max_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  return m;
}

TEST(Adam, OneStepByHand) {
  at::Tensor p = at::ones({1});
  p.mutable_grad() = at::full({1}, 0.5);
  Adam adam({p}, AdamOptions{0.9, 0.999, 1e-8, 0.0, true, false});
  adam.step(/*lr=*/0.1);
  // m = 0.05, v = 0.00025; bias-corrected 0.5 and 0.25: update 0.1 * 0.5 / (0.5 + 1e-8).
  EXPECT_NEAR(p.item<double>(), 1.0 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-7);
}

TEST(Adam, FusedEqualsPlainWithin1e6) {
  for (bool decoupled : {true, false}) {
    auto plain_params = make_params(1);
    auto fused_params = make_params(1);
    Adam plain(plain_params, AdamOptions{0.9, 0.95, 1e-8, 0.1, decoupled, /*fused=*/false});
    Adam fused(fused_params, AdamOptions{0.9, 0.95, 1e-8, 0.1, decoupled, /*fused=*/true});
    for (int64_t step = 0; step < 10; ++step) {
      set_grads(plain_params, step);
      set_grads(fused_params, step);
      plain.step(1e-3 * (step + 1));
      fused.step(1e-3 * (step + 1));
    }
    EXPECT_LT(max_diff(plain_params, fused_params), 1e-6) << "decoupled " << decoupled;
    EXPECT_GT(max_diff(plain_params, make_params(1)), 1e-3);  // they did move
  }
}

TEST(Adam, PlainEqualsLibTorchOptim) {
  auto ours = make_params(2);
  auto theirs = make_params(2);
  for (at::Tensor& t : theirs) t.set_requires_grad(true);
  Adam adam(ours, AdamOptions{0.9, 0.98, 1e-6, 0.01, /*decoupled=*/true, false});
  torch::optim::AdamW reference(
      theirs, torch::optim::AdamWOptions(2e-3).betas({0.9, 0.98}).eps(1e-6).weight_decay(0.01));
  for (int64_t step = 0; step < 10; ++step) {
    set_grads(ours, step);
    set_grads(theirs, step);
    adam.step(2e-3);
    reference.step();
  }
  std::vector<at::Tensor> detached;
  for (const at::Tensor& t : theirs) detached.push_back(t.detach());
  EXPECT_LT(max_diff(ours, detached), 1e-6);
  EXPECT_EQ(adam.state_bytes(), 2 * (35 + 5 + 24) * 4);
}

}  // namespace
}  // namespace gpudays
