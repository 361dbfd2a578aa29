// Selective scan: the fused CPU kernel and the chunked ATen scan against the plain reference
// (output and the gradients of all five inputs; fp32, fp64, bf16 and fp16 inputs; threads,
// sequence lengths and chunk sizes), both hand-written backwards against finite differences in
// fp64, decays from ~1 to underflow, the choice by device, the chunked scan in the model and on
// CUDA.
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/randn_like.h>
#include <ATen/ops/softplus.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include <array>
#include <cmath>
#include <functional>

#include "common/error.h"
#include "family_test_util.h"
#include "models/losses.h"
#include "models/selective_scan.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

struct ScanArgs {
  at::Tensor u, delta, A, Bs, Cs;
  std::array<at::Tensor*, 5> all() { return {&u, &delta, &A, &Bs, &Cs}; }
  std::array<const at::Tensor*, 5> all_const() const { return {&u, &delta, &A, &Bs, &Cs}; }
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

using ScanFn = std::function<at::Tensor(const ScanArgs&)>;

ScanFn scan_of(ScanKind kind) {
  return [kind](const ScanArgs& a) { return selective_scan(a.u, a.delta, a.A, a.Bs, a.Cs, kind); };
}

ScanFn chunked_scan(int64_t chunk_size) {
  return [chunk_size](const ScanArgs& a) {
    return selective_scan_chunked(a.u, a.delta, a.A, a.Bs, a.Cs, chunk_size);
  };
}

ScanResult run(ScanArgs& a, const ScanFn& scan, const at::Tensor& dy) {
  for (at::Tensor* t : a.all()) t->mutable_grad() = at::Tensor();
  const at::Tensor y = scan(a);
  y.backward(dy.to(y.scalar_type()));
  ScanResult r{y.detach(), {}};
  for (size_t i = 0; i < 5; ++i) r.grads[i] = a.all()[i]->grad();
  return r;
}

ScanResult run(ScanArgs& a, ScanKind kind, const at::Tensor& dy) {
  return run(a, scan_of(kind), dy);
}

// The worst max_rel_diff of y and of the five gradients against a reference, each checked.
struct Diffs {
  double y = 0, grads = 0;
};

Diffs compare(const ScanResult& got, const ScanResult& ref, double tolerance, const char* what) {
  Diffs d{test::max_rel_diff(got.y, ref.y), 0};
  EXPECT_LT(d.y, tolerance) << what << ": y";
  for (size_t i = 0; i < 5; ++i) {
    const double diff = test::max_rel_diff(got.grads[i], ref.grads[i]);
    EXPECT_LT(diff, tolerance) << what << ": gradient of " << kArgNames[i];
    d.grads = std::max(d.grads, diff);
  }
  return d;
}

// Leaf copies of `a` in another dtype (and device).
ScanArgs converted(const ScanArgs& a, const at::TensorOptions& options) {
  ScanArgs c;
  for (size_t i = 0; i < 5; ++i) {
    *c.all()[i] = a.all_const()[i]->detach().to(options).requires_grad_(true);
  }
  return c;
}

// Same per-element maths; only the order of sums differs (y_t = C_t . h_t over N in BLAS vs a
// loop; the gradients of A, B and C sum over B x T or over D in another order), so differences are
// rounding: a few ulps of the largest entry. Tolerances 2e-5 (fp32) and 1e-12 (fp64), relative to
// the tensor's largest entry.
void expect_plain_and_fused_agree(ScanArgs& a, at::ScalarType dtype) {
  const double tolerance = dtype == at::kFloat ? 2e-5 : 1e-12;
  const at::Tensor dy = at::randn_like(a.u);
  const ScanResult plain = run(a, ScanKind::kPlain, dy);
  const Diffs d = compare(run(a, ScanKind::kFused, dy), plain, tolerance, "fused");
  std::cout << "[plain vs fused scan] " << c10::toString(dtype) << ", " << at::get_num_threads()
            << " thread(s): y max rel diff " << d.y << ", gradients " << d.grads << "\n";
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

// A single state, a single step: the recurrence reduces to y = C * delta * B * u (exactly for the
// plain and fused scans; the chunked one multiplies (delta u) B: within 1 ulp in fp64).
TEST(SelectiveScan, OneStepIsTheInputTerm) {
  torch::manual_seed(2);
  ScanArgs a = random_args(/*batch=*/2, /*channels=*/5, /*steps=*/1, /*states=*/1, at::kDouble);
  const at::Tensor expected = a.delta * a.Bs.view({2, 1, 1}) * a.u * a.Cs.view({2, 1, 1});
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused, ScanKind::kChunked}) {
    const at::Tensor y = selective_scan(a.u, a.delta, a.A, a.Bs, a.Cs, kind);
    const double ulp = std::ldexp(test::max_abs(expected), -52);
    EXPECT_LE(test::max_abs_diff(y, expected), kind == ScanKind::kChunked ? ulp : 0.0)
        << to_string(kind);
  }
}

// Both hand-written backwards (fused; chunked in chunks of 8 over 30 steps, the last one padded)
// against central differences in fp64, one random direction per input. Error O(h^2) ~ 1e-12
// relative; required 1e-7.
TEST(SelectiveScan, HandWrittenGradientsMatchFiniteDifferencesInDouble) {
  for (const auto& [name, scan] : {std::pair{"fused", scan_of(ScanKind::kFused)},
                                   std::pair{"chunked", chunked_scan(/*chunk_size=*/8)}}) {
    torch::manual_seed(3);
    ScanArgs a = random_args(/*batch=*/2, /*channels=*/19, /*steps=*/30, /*states=*/6, at::kDouble);
    const at::Tensor dy = at::randn_like(a.u);
    const ScanResult result = run(a, scan, dy);
    const auto objective = [&] { return (scan(a) * dy).sum().item<double>(); };
    const double h = 1e-6;
    double worst = 0;
    for (size_t i = 0; i < 5; ++i) {
      at::Tensor& p = *a.all()[i];
      const at::Tensor v = at::randn_like(p);
      const double analytic = (result.grads[i] * v).sum().item<double>();
      at::NoGradGuard no_grad;
      p.add_(v, h);
      const double up = objective();
      p.add_(v, -2 * h);
      const double down = objective();
      p.add_(v, h);
      const double numeric = (up - down) / (2 * h);
      const double error = std::abs(numeric - analytic) / std::max(1.0, std::abs(analytic));
      EXPECT_LT(error, 1e-7) << name << ", " << kArgNames[i] << ": numeric " << numeric
                             << ", analytic " << analytic;
      worst = std::max(worst, error);
    }
    std::cout << "[finite differences] " << name << " scan alone: worst error " << worst << "\n";
  }
}

// Long sequences with decays near 1 (states add up over ~1000 steps) and decays that underflow to
// 0: every fp32 scan stays finite and agrees with the plain scan in fp64 (the chunked one in 16
// chunks) within 6e-5, the worst drift of a product of 1000 decays each rounded by 2^-24. The
// per-step scans drift by 1.4e-5 here; the chunked one, exp(A * cumsum(delta)), by 1.3e-6.
TEST(SelectiveScan, ExtremeDecaysStayFinite) {
  torch::manual_seed(4);
  ScanArgs a = random_args(/*batch=*/1, /*channels=*/4, /*steps=*/1000, /*states=*/4, at::kFloat);
  {
    at::NoGradGuard no_grad;
    a.delta.narrow(1, 0, 2).fill_(1e-4);  // exp(delta A) ~ 1 - 1e-3
    a.delta.narrow(1, 2, 2).fill_(50);    // exp(delta A) underflows to 0
  }
  const at::Tensor dy = at::randn_like(a.u);
  ScanArgs exact = converted(a, at::TensorOptions().dtype(at::kDouble));
  const ScanResult reference = run(exact, ScanKind::kPlain, dy.to(at::kDouble));
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused, ScanKind::kChunked}) {
    const ScanResult fast = run(a, kind, dy);
    EXPECT_TRUE(at::isfinite(fast.y).all().item<bool>()) << to_string(kind);
    for (const at::Tensor& g : fast.grads) EXPECT_TRUE(at::isfinite(g).all().item<bool>());
    const Diffs d = compare(fast, reference, 6e-5, to_string(kind).c_str());
    std::cout << "[extreme decays, vs fp64] " << to_string(kind) << ": y " << d.y << ", gradients "
              << d.grads << "\n";
  }
}

// The chunked scan against the plain one over lengths around the chunk (1, below, equal, one
// either side, several chunks with a padded last one) and chunk sizes (1: every step a chunk).
// The sums run in another order (exp(A * cumsum(delta)) for products of decays, chunk carries), so
// the differences are rounding: relative to each tensor's largest entry, 2e-5 in fp32 (a few
// hundred ulps of accumulated sums over up to 200 steps) and 1e-12 in fp64.
TEST(SelectiveScan, ChunkedAgreesWithPlainOverLengthsAndChunkSizes) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const double tolerance = dtype == at::kFloat ? 2e-5 : 1e-12;
    Diffs worst;
    for (const int64_t steps : {1, 5, 15, 16, 17, 64, 200}) {
      torch::manual_seed(steps);
      ScanArgs a = random_args(/*batch=*/2, /*channels=*/7, steps, /*states=*/16, dtype);
      const at::Tensor dy = at::randn_like(a.u);
      const ScanResult plain = run(a, ScanKind::kPlain, dy);
      for (const int64_t chunk : {1, 3, 16, 64, 128}) {
        const std::string what = "T " + std::to_string(steps) + ", chunk " + std::to_string(chunk);
        const Diffs d = compare(run(a, chunked_scan(chunk), dy), plain, tolerance, what.c_str());
        worst = {std::max(worst.y, d.y), std::max(worst.grads, d.grads)};
      }
    }
    std::cout << "[plain vs chunked scan] " << c10::toString(dtype) << ": y max rel diff "
              << worst.y << ", gradients " << worst.grads << "\n";
  }
}

// bf16 and fp16 inputs: the chunked scan computes in fp32 and returns the inputs' dtype, so it
// equals the plain fp32 scan of the same values rounded once: half an ulp of each entry, at most
// 2^-9 (bf16) or 2^-12 (fp16) of the largest; tolerance 2^-8 and 2^-11. A scan computed in bf16
// would drift by many ulps over the 100 steps.
TEST(SelectiveScan, ChunkedComputesHalfPrecisionInputsInFloat) {
  for (const auto dtype : {at::kBFloat16, at::kHalf}) {
    torch::manual_seed(5);
    const ScanArgs base =
        random_args(/*batch=*/2, /*channels=*/9, /*steps=*/100, /*states=*/16, at::kFloat);
    ScanArgs low = converted(base, at::TensorOptions().dtype(dtype));
    ScanArgs wide = converted(low, at::TensorOptions().dtype(at::kFloat));
    const at::Tensor dy = at::randn_like(base.u).to(dtype).to(at::kFloat);
    const ScanResult got = run(low, chunked_scan(/*chunk_size=*/16), dy);
    EXPECT_EQ(got.y.scalar_type(), dtype);
    for (const at::Tensor& g : got.grads) EXPECT_EQ(g.scalar_type(), dtype);
    const double tolerance = dtype == at::kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    const Diffs d = compare(got, run(wide, ScanKind::kPlain, dy), tolerance, "half precision");
    std::cout << "[plain fp32 vs chunked scan] " << c10::toString(dtype) << " inputs: y max rel "
              << "diff " << d.y << ", gradients " << d.grads << "\n";
  }
}

// kFused means the fast scan of the tensors' device: the CPU kernel only for CPU tensors. On meta
// tensors (no data, no GPU needed) the CPU kernel would throw; the chunked scan runs.
TEST(SelectiveScan, TheCpuKernelRunsOnlyOnCpuTensors) {
  const c10::Device cpu(c10::kCPU);
  const c10::Device cuda(c10::kCUDA, 0);
  EXPECT_EQ(scan_for_device(ScanKind::kFused, cpu), ScanKind::kFused);
  EXPECT_EQ(scan_for_device(ScanKind::kFused, cuda), ScanKind::kChunked);
  EXPECT_EQ(scan_for_device(ScanKind::kFused, c10::Device(c10::kMeta)), ScanKind::kChunked);
  EXPECT_EQ(scan_for_device(ScanKind::kPlain, cuda), ScanKind::kPlain);
  EXPECT_EQ(scan_for_device(ScanKind::kChunked, cpu), ScanKind::kChunked);
  EXPECT_EQ(scan_implementation(ScanKind::kFused, cpu), "fused-cpu");
  EXPECT_EQ(scan_implementation(ScanKind::kFused, cuda), "chunked-aten");
  EXPECT_EQ(scan_implementation(ScanKind::kPlain, cuda), "plain");
  EXPECT_EQ(scan_implementation(ScanKind::kChunked, cpu), "chunked-aten");
  const auto meta = at::TensorOptions().device(at::kMeta);
  const at::Tensor x = at::empty({2, 3, 100}, meta);
  const at::Tensor bc = at::empty({2, 100, 4}, meta);
  const at::Tensor A = at::empty({3, 4}, meta);
  EXPECT_THROW(selective_scan_fused_cpu(x, x, A, bc, bc), InputError);
  const at::Tensor y = selective_scan(x, x, A, bc, bc, ScanKind::kFused);
  EXPECT_EQ(y.sizes(), x.sizes());
  EXPECT_TRUE(y.is_meta());
}

// The chunked scan in the whole model, 100 tokens (two chunks of 64, the second padded), against
// the plain one: rounding only, as PlainAndFusedScansAgreeInTheModel (mamba_test.cpp): 1e-5
// absolute on logits of magnitude ~1 and 1e-4 relative on gradients in fp32.
TEST(SelectiveScan, ChunkedScanInTheModelAgreesWithPlain) {
  MambaForCausalLM model = test::tiny_mamba(at::kFloat);
  const at::Tensor tokens = at::randint(96, {2, 100});
  std::array<at::Tensor, 2> logits;
  std::array<std::vector<at::Tensor>, 2> grads;
  for (const int i : {0, 1}) {
    model->set_scan(i == 0 ? ScanKind::kPlain : ScanKind::kChunked);
    model->zero_grad();
    logits[i] = model->forward(tokens);
    causal_lm_loss(logits[i], tokens).backward();
    for (const at::Tensor& p : model->parameters()) grads[i].push_back(p.grad().clone());
  }
  const double logit_diff = test::max_abs_diff(logits[1], logits[0]);
  EXPECT_LT(logit_diff, 1e-5);
  double worst = 0;
  for (size_t i = 0; i < grads[0].size(); ++i) {
    worst = std::max(worst, test::max_rel_diff(grads[1][i], grads[0][i]));
  }
  EXPECT_LT(worst, 1e-4);
  std::cout << "[plain vs chunked scan, model] logits max abs diff " << logit_diff
            << ", gradients max rel diff " << worst << "\n";
}

// On a GPU, kFused runs the chunked scan (never the CPU kernel) and agrees with the plain scan on
// the same device as on the CPU (fp32: 2e-5), over 300 steps in 5 chunks; bf16 inputs as above.
TEST(SelectiveScan, FusedRequestRunsTheChunkedScanOnCuda_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  const auto on_gpu = at::TensorOptions().device(c10::Device(c10::kCUDA, 0));
  torch::manual_seed(6);
  const ScanArgs base =
      random_args(/*batch=*/2, /*channels=*/33, /*steps=*/300, /*states=*/16, at::kFloat);
  ScanArgs a = converted(base, on_gpu.dtype(at::kFloat));
  EXPECT_EQ(scan_implementation(ScanKind::kFused, a.u.device()), "chunked-aten");
  const at::Tensor dy = at::randn_like(a.u);
  const ScanResult plain = run(a, ScanKind::kPlain, dy);
  const Diffs d = compare(run(a, ScanKind::kFused, dy), plain, 2e-5, "cuda fp32");
  ScanArgs low = converted(base, on_gpu.dtype(at::kBFloat16));
  ScanArgs wide = converted(low, on_gpu.dtype(at::kFloat));
  const at::Tensor dy_low = dy.to(at::kBFloat16).to(at::kFloat);
  const ScanResult got = run(low, ScanKind::kFused, dy_low);
  EXPECT_TRUE(got.y.is_cuda());
  const Diffs h = compare(got, run(wide, ScanKind::kPlain, dy_low), std::ldexp(1.0, -8), "bf16");
  std::cout << "[plain vs chunked scan, CUDA] fp32: y " << d.y << ", gradients " << d.grads
            << "; bf16 inputs: y " << h.y << ", gradients " << h.grads << "\n";
}

TEST(SelectiveScan, NamesAndBadInput) {
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused, ScanKind::kChunked}) {
    EXPECT_EQ(parse_scan_kind(to_string(kind)), kind);
  }
  EXPECT_EQ(to_string(ScanKind::kChunked), "chunked");
  try {
    parse_scan_kind("parallel");
    FAIL() << "unknown names must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plain, fused or chunked"), std::string::npos) << e.what();
  }
  const auto meta = at::TensorOptions().device(at::kMeta);
  const at::Tensor x = at::empty({1, 2, 3}, meta);
  const at::Tensor bc = at::empty({1, 3, 4}, meta);
  EXPECT_THROW(selective_scan(x, x, at::empty({3, 4}, meta), bc, bc, ScanKind::kPlain),
               c10::Error);  // A has 3 channels, u has 2
  EXPECT_THROW(selective_scan_chunked(x, x, at::empty({2, 4}, meta), bc, bc, /*chunk_size=*/0),
               c10::Error);
}

}  // namespace
}  // namespace gpudays::models
