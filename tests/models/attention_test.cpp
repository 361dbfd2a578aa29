// Grouped-query attention in attend(): fewer key/value heads than query heads. The plain path
// (transformers' repeat_kv, then matmuls) is the reference; the fused path, which hands the groups
// to the kernel (enable_gqa) where a fused kernel takes them and repeats them otherwise, must give
// the same output and the same gradients for q, k and v, which sum over each group.
#include <ATen/TensorOperators.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "models/attention.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

struct Attended {
  at::Tensor out;                 // [B, H, T, D]
  std::vector<at::Tensor> grads;  // d<out, w>/dq, dk, dv
};

Attended run(AttentionKind kind, const std::vector<at::Tensor>& qkv, const at::Tensor& weights) {
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : qkv) inputs.push_back(t.detach().requires_grad_(true));
  const at::Tensor out =
      attend(inputs[0], inputs[1], inputs[2], AttentionMask{.causal = true, .key_keep = {}}, kind);
  const auto grads = torch::autograd::grad({(out * weights).sum()}, inputs);
  return {out.detach(), {grads.begin(), grads.end()}};
}

// B 2, 8 query heads in groups of 1, 2, 4 and 8 (multi-query), T 24, D 16.
void expect_fused_equals_plain(const at::TensorOptions& options, double tolerance) {
  double worst_out = 0, worst_grad = 0;
  for (const int64_t kv_heads : {8, 4, 2, 1}) {
    const std::vector<at::Tensor> qkv = {at::randn({2, 8, 24, 16}, options),
                                         at::randn({2, kv_heads, 24, 16}, options),
                                         at::randn({2, kv_heads, 24, 16}, options)};
    const at::Tensor weights = at::randn({2, 8, 24, 16}, options);
    const Attended plain = run(AttentionKind::kPlain, qkv, weights);
    const Attended fused = run(AttentionKind::kFused, qkv, weights);
    const double out = test::max_abs_diff(plain.out, fused.out);
    EXPECT_LT(out, tolerance) << kv_heads << " kv heads";
    worst_out = std::max(worst_out, out);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(fused.grads[i].sizes(), qkv[i].sizes());
      const double grad = test::max_rel_diff(fused.grads[i], plain.grads[i]);
      EXPECT_LT(grad, tolerance) << "gradient "
                                 << "qkv"[i] << ", " << kv_heads << " kv heads";
      worst_grad = std::max(worst_grad, grad);
    }
  }
  std::cout << "[grouped-query attention] " << c10::toString(options.dtype().toScalarType()) << " "
            << options.device() << ": output max abs diff " << worst_out
            << ", gradients max rel diff " << worst_grad << "\n";
}

// The CPU's flash kernel takes the groups in fp32 and fp64 (tolerances as PlainVsFused's).
TEST(GroupedQueryAttention, FusedEqualsPlainOnTheCpu) {
  expect_fused_equals_plain(at::TensorOptions().dtype(at::kFloat), 1e-5);
  expect_fused_equals_plain(at::TensorOptions().dtype(at::kDouble), 1e-12);
}

// On CUDA, fp32 goes to the memory-efficient kernel with repeated heads (1e-4: cuBLAS and the
// kernel sum in other orders, as the CUDA parity cases allow), bf16 to flash with the groups; bf16
// keeps 8 significant bits (2^-8 = 0.4% relative, a few roundings: 2e-2).
TEST(GroupedQueryAttention, FusedEqualsPlainOnCuda_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  expect_fused_equals_plain(at::TensorOptions().device(at::kCUDA).dtype(at::kFloat), 1e-4);
  expect_fused_equals_plain(at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16), 2e-2);
}

}  // namespace
}  // namespace gpudays::models
