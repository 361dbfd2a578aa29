// Activation checkpointing applied from outside: same loss and gradients as the plain run,
// bit for bit in fp32 even with dropout (the RNG state is replayed), also under bf16 autocast;
// and it keeps less memory.
#include <gtest/gtest.h>

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/modules/linear.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include "engine/activation_checkpoint.h"
#include "engine/cpu_memory.h"

namespace gpudays {
namespace {

namespace F = torch::nn::functional;

struct BlockRun {
  at::Tensor loss;
  std::vector<at::Tensor> grads;
};

// Four blocks of Linear, dropout and GELU; the same initial weights every time.
BlockRun run_blocks(bool checkpoint, int64_t width, int64_t batch) {
  at::manual_seed(7);
  std::vector<torch::nn::Linear> blocks;
  for (int i = 0; i < 4; ++i) blocks.emplace_back(width, width);
  const at::Tensor x = at::randn({batch, width});
  at::manual_seed(99);  // the dropout masks
  at::Tensor h = x;
  for (auto& block : blocks) {
    BlockFn fn = [&block](const at::Tensor& in) {
      return F::gelu(F::dropout(block->forward(in), F::DropoutFuncOptions().p(0.2).training(true)));
    };
    h = checkpoint ? checkpointed_block(fn, h) : fn(h);
  }
  BlockRun r;
  r.loss = h.to(at::kFloat).pow(2).mean();
  r.loss.backward();
  for (auto& block : blocks) {
    r.grads.push_back(block->weight.grad().clone());
    r.grads.push_back(block->bias.grad().clone());
  }
  return r;
}

void expect_identical(const BlockRun& a, const BlockRun& b) {
  EXPECT_TRUE(at::equal(a.loss, b.loss))
      << a.loss.item<double>() << " vs " << b.loss.item<double>();
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) EXPECT_TRUE(at::equal(a.grads[i], b.grads[i])) << i;
}

TEST(ActivationCheckpoint, BitIdenticalToThePlainRunWithDropout) {
  expect_identical(run_blocks(false, 32, 8), run_blocks(true, 32, 8));
}

TEST(ActivationCheckpoint, BitIdenticalUnderBf16Autocast) {
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const BlockRun plain = run_blocks(false, 32, 8);
  const BlockRun checkpointed = run_blocks(true, 32, 8);
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  expect_identical(plain, checkpointed);
}

TEST(ActivationCheckpoint, KeepsLessMemory) {
  int64_t peak[2];
  for (bool checkpoint : {false, true}) {
    CpuMemoryScope scope;
    run_blocks(checkpoint, 256, 2048);
    peak[checkpoint] = scope.stats().peak_bytes;
  }
  EXPECT_LT(peak[1], peak[0]);
}

}  // namespace
}  // namespace gpudays
