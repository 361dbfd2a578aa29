// Selective scan: the fused CPU kernel against the plain reference (output and the gradients of all
// five inputs, fp32 and fp64, one and several threads), the fused backward against finite
// differences in fp64, decays from ~1 to underflow, and bad input.
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randn_like.h>
#include <ATen/ops/softplus.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include <array>
#include <cmath>

#include "common/error.h"
#include "models/selective_scan.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

struct ScanArgs {
  at::Tensor u, delta, A, Bs, Cs;
  std::array<at::Tensor*, 5> all() { return {&u, &delta, &A, &Bs, &Cs}; }
};
constexpr std::array<const char*, 5> kArgNames = {"u", "delta", "A", "B", "C"};

// Ranges as in a trained Mamba: A = -(1..16) (S4D-real), delta from ~0 to ~10, so per-step decays
// exp(delta A) run from ~1 (long memory) to underflow (no memory).
ScanArgs random_args(
    int64_t batch, int64_t channels, int64_t steps, int64_t states, at::ScalarType dtype) {
  const auto o = at::TensorOptions().dtype(dtype);
  ScanArgs a{at::randn({batch, channels, steps}, o),
             at::softplus(2 * at::randn({batch, channels, steps}, o) - 2),
             -at::exp(at::rand({channels, states}, o) * std::log(16.0)),
             at::randn({batch, steps, states}, o),
             at::randn({batch, steps, states}, o)};
  for (at::Tensor* t : a.all()) t->requires_grad_(true);
  return a;
}

struct ScanResult {
  at::Tensor y;
  std::array<at::Tensor, 5> grads;
};

ScanResult run(ScanArgs& a, ScanKind kind, const at::Tensor& dy) {
  for (at::Tensor* t : a.all()) t->mutable_grad() = at::Tensor();
  const at::Tensor y = selective_scan(a.u, a.delta, a.A, a.Bs, a.Cs, kind);
  y.backward(dy);
  ScanResult r{y.detach(), {}};
  for (size_t i = 0; i < 5; ++i) r.grads[i] = a.all()[i]->grad();
  return r;
}

// Same per-element maths; only the order of sums differs (y_t = C_t . h_t over N in BLAS vs a
// loop; the gradients of A, B and C sum over B x T or over D in another order), so differences are
// rounding: a few ulps of the largest entry. Tolerances 2e-5 (fp32) and 1e-12 (fp64), relative to
// the tensor's largest entry.
void expect_plain_and_fused_agree(ScanArgs& a, at::ScalarType dtype) {
  const double tolerance = dtype == at::kFloat ? 2e-5 : 1e-12;
  const at::Tensor dy = at::randn_like(a.u);
  const ScanResult plain = run(a, ScanKind::kPlain, dy);
  const ScanResult fused = run(a, ScanKind::kFused, dy);
  const double y_diff = test::max_rel_diff(fused.y, plain.y);
  EXPECT_LT(y_diff, tolerance) << "y";
  double worst = 0;
  for (size_t i = 0; i < 5; ++i) {
    const double diff = test::max_rel_diff(fused.grads[i], plain.grads[i]);
    EXPECT_LT(diff, tolerance) << "gradient of " << kArgNames[i];
    worst = std::max(worst, diff);
  }
  std::cout << "[plain vs fused scan] " << c10::toString(dtype) << ", " << at::get_num_threads()
            << " thread(s): y max rel diff " << y_diff << ", gradients " << worst << "\n";
}

TEST(SelectiveScan, PlainAndFusedAgreeInFloatAndDouble) {
  torch::manual_seed(0);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    ScanArgs a = random_args(/*batch=*/2, /*channels=*/37, /*steps=*/200, /*states=*/16, dtype);
    expect_plain_and_fused_agree(a, dtype);
  }
}

// Several threads: channels split unevenly, B and C gradients summed from per-thread parts.
TEST(SelectiveScan, PlainAndFusedAgreeWithSeveralThreads) {
  torch::manual_seed(1);
  at::set_num_threads(3);
  ScanArgs a = random_args(/*batch=*/3, /*channels=*/53, /*steps=*/64, /*states=*/8, at::kFloat);
  expect_plain_and_fused_agree(a, at::kFloat);
  at::set_num_threads(1);
}

// A single state, a single step: the recurrence reduces to y = C * delta * B * u.
TEST(SelectiveScan, OneStepIsTheInputTerm) {
  torch::manual_seed(2);
  ScanArgs a = random_args(/*batch=*/2, /*channels=*/5, /*steps=*/1, /*states=*/1, at::kDouble);
  const at::Tensor expected = a.delta * a.Bs.view({2, 1, 1}) * a.u * a.Cs.view({2, 1, 1});
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    const at::Tensor y = selective_scan(a.u, a.delta, a.A, a.Bs, a.Cs, kind);
    EXPECT_EQ(test::max_abs_diff(y, expected), 0) << to_string(kind);
  }
}

// The fused backward is hand-written: check it against central differences in fp64, one random
// direction per input. Error O(h^2) ~ 1e-12 relative; required 1e-7.
TEST(SelectiveScan, FusedGradientsMatchFiniteDifferencesInDouble) {
  torch::manual_seed(3);
  ScanArgs a = random_args(/*batch=*/2, /*channels=*/19, /*steps=*/30, /*states=*/6, at::kDouble);
  const at::Tensor dy = at::randn_like(a.u);
  const ScanResult fused = run(a, ScanKind::kFused, dy);
  const auto objective = [&] {
    return (selective_scan(a.u, a.delta, a.A, a.Bs, a.Cs, ScanKind::kFused) * dy)
        .sum()
        .item<double>();
  };
  const double h = 1e-6;
  double worst = 0;
  for (size_t i = 0; i < 5; ++i) {
    at::Tensor& p = *a.all()[i];
    const at::Tensor v = at::randn_like(p);
    const double analytic = (fused.grads[i] * v).sum().item<double>();
    at::NoGradGuard no_grad;
    p.add_(v, h);
    const double up = objective();
    p.add_(v, -2 * h);
    const double down = objective();
    p.add_(v, h);
    const double numeric = (up - down) / (2 * h);
    const double error = std::abs(numeric - analytic) / std::max(1.0, std::abs(analytic));
    EXPECT_LT(error, 1e-7) << kArgNames[i] << ": numeric " << numeric << ", analytic " << analytic;
    worst = std::max(worst, error);
  }
  std::cout << "[finite differences] fused scan alone: worst error " << worst << "\n";
}

// Long sequences with decays near 1 (states add up over ~1000 steps) and decays that underflow to
// 0: both scans stay finite and agree.
TEST(SelectiveScan, ExtremeDecaysStayFinite) {
  torch::manual_seed(4);
  ScanArgs a = random_args(/*batch=*/1, /*channels=*/4, /*steps=*/1000, /*states=*/4, at::kFloat);
  {
    at::NoGradGuard no_grad;
    a.delta.narrow(1, 0, 2).fill_(1e-4);  // exp(delta A) ~ 1 - 1e-3
    a.delta.narrow(1, 2, 2).fill_(50);    // exp(delta A) underflows to 0
  }
  const at::Tensor dy = at::randn_like(a.u);
  const ScanResult plain = run(a, ScanKind::kPlain, dy);
  const ScanResult fused = run(a, ScanKind::kFused, dy);
  EXPECT_TRUE(at::isfinite(fused.y).all().item<bool>());
  for (const at::Tensor& g : fused.grads) EXPECT_TRUE(at::isfinite(g).all().item<bool>());
  EXPECT_LT(test::max_rel_diff(fused.y, plain.y), 2e-5);
}

TEST(SelectiveScan, NamesAndBadInput) {
  EXPECT_EQ(parse_scan_kind("plain"), ScanKind::kPlain);
  EXPECT_EQ(parse_scan_kind(to_string(ScanKind::kFused)), ScanKind::kFused);
  try {
    parse_scan_kind("parallel");
    FAIL() << "unknown names must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plain or fused"), std::string::npos) << e.what();
  }
  const auto meta = at::TensorOptions().device(at::kMeta);
  const at::Tensor x = at::empty({1, 2, 3}, meta);
  const at::Tensor bc = at::empty({1, 3, 4}, meta);
  EXPECT_THROW(selective_scan(x, x, at::empty({2, 4}, meta), bc, bc, ScanKind::kFused), InputError);
  EXPECT_THROW(selective_scan(x, x, at::empty({3, 4}, meta), bc, bc, ScanKind::kPlain),
               c10::Error);  // A has 3 channels, u has 2
}

}  // namespace
}  // namespace gpudays::models
