// The engine's methods against the plain path on a small MLP of two blocks with a fixed seed:
// accumulation, fused AdamW, sharding with offloading on one rank, clipping, fp16 loss scaling,
// rejected method sets, model-state memory against the ZeRO formula. The same under mpirun with
// 2 or 4 ranks: engine_mpi_test.cpp.
#include <gtest/gtest.h>

#include <torch/nn/utils/clip_grad.h>

#include <ATen/ATen.h>

#include "common/error.h"
#include "distributed/communicator.h"
#include "engine/engine.h"
#include "engine_test_util.h"

namespace gpudays {
namespace {

using namespace engine_test;

TEST(Engine, AccumulationEqualsOneBigBatch) {
  auto single = make_single_process_communicator();
  Mlp m;
  const auto accumulated = train(m, *single, base_options(/*acc=*/4), 5);
  EXPECT_LT(max_diff(accumulated, reference(base_options(1), 5)), 1e-6);
}

TEST(Engine, FusedAdamWEqualsPlain) {
  auto single = make_single_process_communicator();
  EngineOptions o = base_options(2);
  o.adam.fused = true;
  Mlp m;
  EXPECT_LT(max_diff(train(m, *single, o, 5), reference(base_options(1), 5)), 1e-6);
}

TEST(Engine, ShardedOffloadOnOneRankIsBitIdentical) {
  auto single = make_single_process_communicator();
  for (Sharding s : {Sharding::kZero1,
                     Sharding::kZero2,
                     Sharding::kFsdpShardGradOp,
                     Sharding::kZero3,
                     Sharding::kFsdpFullShard}) {
    EngineOptions o = base_options(2);
    o.sharding = s;
    o.offload = true;
    Mlp m, plain;
    const auto sharded = train(m, *single, o, 5);
    EXPECT_EQ(max_diff(sharded, train(plain, *single, base_options(2), 5)), 0.0) << to_string(s);
  }
}

// Stage 3 holds a block's weights only while it runs: inside block i's forward (and its
// recomputation-free backward) block i is gathered and the other block is not; between steps
// neither is.
TEST(Engine, Stage3GathersEachBlockOnlyWhileItRuns) {
  auto single = make_single_process_communicator();
  Mlp m;
  EngineOptions o = base_options(1);
  o.sharding = Sharding::kZero3;
  o.offload = true;
  Engine engine(m.params(), *single, o, m.blocks());
  const auto gathered = [&](int64_t block) {
    return m.blocks()[static_cast<size_t>(block)][0].storage().nbytes() > 0;
  };
  std::vector<std::pair<bool, bool>> seen;  // (this block gathered, the other gathered)
  m.runner =
      engine.block_runner([&](int64_t index, const models::Block& block, const at::Tensor& hidden) {
        seen.emplace_back(gathered(index), gathered(1 - index));
        return block(hidden);
      });
  EXPECT_FALSE(gathered(0) || gathered(1));
  engine.step([&](int64_t) { return m.loss(0, kGlobalBatch); });
  EXPECT_FALSE(gathered(0) || gathered(1));
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& [own, other] : seen) {
    EXPECT_TRUE(own);
    EXPECT_FALSE(other);
  }
  engine.gather_parameters();
  EXPECT_TRUE(gathered(0) && gathered(1));
}

TEST(Engine, ClippingEqualsLibTorchsClipGradNorm) {
  auto single = make_single_process_communicator();
  EngineOptions o = base_options(1);
  o.clip_grad_norm = 1e-3;
  Mlp ours;
  Engine engine(ours.params(), *single, o);
  const StepResult r = engine.step([&](int64_t) { return ours.loss(0, kGlobalBatch); });
  Mlp theirs;
  theirs.loss(0, kGlobalBatch).backward();
  const double norm = torch::nn::utils::clip_grad_norm_(theirs.params(), 1e-3);
  Adam(theirs.params(), o.adam).step(1e-2);
  EXPECT_NEAR(r.grad_norm, norm, 1e-6 * norm);  // the norm before clipping
  EXPECT_GT(norm, 1e-3);
  EXPECT_LT(max_diff(ours.params(), theirs.params()), 1e-7);
  for (const at::Tensor& p : ours.params()) EXPECT_FALSE(p.grad().defined());  // freed
}

TEST(Engine, Fp16LossScalingSkipsAnOverflowAndRecovers) {
  auto single = make_single_process_communicator();
  Mlp m;
  EngineOptions o = base_options(1);
  o.precision = Precision::kFp16;
  o.loss_scaler = LossScalerOptions{1024, 2, 0.5, 1000, 1};
  Engine engine(m.params(), *single, o);
  engine.step([&](int64_t) { return m.loss(0, kGlobalBatch); });
  std::vector<at::Tensor> before;
  for (const at::Tensor& p : m.params()) before.push_back(p.detach().clone());
  const StepResult overflow = engine.step([&](int64_t) { return m.loss(16, kGlobalBatch) * 1e30; });
  EXPECT_FALSE(overflow.applied);
  EXPECT_EQ(engine.loss_scale(), 512);
  std::vector<at::Tensor> after;
  for (const at::Tensor& p : m.params()) after.push_back(p.detach().clone());
  EXPECT_EQ(max_diff(before, after), 0.0);  // the step was skipped
  EXPECT_TRUE(engine.step([&](int64_t) { return m.loss(32, kGlobalBatch); }).applied);
}

TEST(Engine, RejectsMethodSetsItCannotRun) {
  auto single = make_single_process_communicator();
  Mlp m;
  EngineOptions o = base_options(1);
  o.sharding = Sharding::kNone;
  o.offload = true;
  EXPECT_THROW(Engine(m.params(), *single, o), InputError);
  o.sharding = Sharding::kZero2;
  o.offload = false;
  EXPECT_THROW(Engine(m.params(), *single, o), InputError);  // one rank without offloading
}

TEST(Engine, UnshardedModelStateMemoryEqualsTheFormula) {
  auto single = make_single_process_communicator();
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    const ModelState m = model_state(*single, Sharding::kNone, p);
    // Measured within 20 bytes (Adam's step counters); 0.1% tells every stage from the next.
    EXPECT_NEAR(m.measured_bytes, m.formula_bytes, 1e-3 * m.formula_bytes) << to_string(p);
  }
}

}  // namespace
}  // namespace gpudays
