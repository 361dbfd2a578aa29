// The engine's methods against the plain path on a small MLP with a fixed seed: accumulation,
// fused AdamW, sharding with offloading on one rank, clipping, fp16 loss scaling, rejected method
// sets; and, under mpirun with 2 or 4 ranks (MpiEngine.*), every implemented sharding stage ends
// with the parameters of one process training on the same global batch.
#include <gtest/gtest.h>

#include <torch/nn/modules/linear.h>
#include <torch/nn/utils/clip_grad.h>

#include <ATen/ATen.h>

#include "common/error.h"
#include "dist/communicator.h"
#include "train/engine.h"

namespace gpudays {
namespace {

constexpr int64_t kGlobalBatch = 16;

struct Mlp {
  torch::nn::Linear in{8, 16};
  torch::nn::Linear out{16, 4};
  Mlp() {
    at::manual_seed(3);
    in = torch::nn::Linear(8, 16);
    out = torch::nn::Linear(16, 4);
  }
  std::vector<at::Tensor> params() {
    return {in->weight, in->bias, out->weight, out->bias};
  }
  // The global dataset: sample i is the same whichever micro-batch or rank draws it.
  at::Tensor loss(int64_t first_sample, int64_t count) {
    std::vector<at::Tensor> xs, ys;
    for (int64_t i = first_sample; i < first_sample + count; ++i) {
      at::manual_seed(1000 + i);
      xs.push_back(at::randn({8}));
      ys.push_back(at::randn({4}));
    }
    const at::Tensor x = at::stack(xs), y = at::stack(ys);
    return (out->forward(at::tanh(in->forward(x))) - y).pow(2).mean();
  }
};

// Trains `steps` steps; rank r takes samples [r * per_rank, (r + 1) * per_rank) of each step's
// global batch, in `acc` micro-batches.
std::vector<at::Tensor> train(Mlp& m, Communicator& comm, EngineOptions o, int steps) {
  Engine engine(m.params(), comm, o);
  const int64_t per_rank = kGlobalBatch / comm.size();
  const int64_t micro = per_rank / o.grad_acc_steps;
  for (int s = 0; s < steps; ++s) {
    engine.step([&](int64_t i) {
      return m.loss(s * kGlobalBatch + comm.rank() * per_rank + i * micro, micro);
    });
  }
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : m.params()) out.push_back(p.detach().clone());
  return out;
}

EngineOptions base_options(int64_t acc) {
  EngineOptions o;
  o.grad_acc_steps = acc;
  o.adam = AdamOptions{0.9, 0.95, 1e-8, 0.1, true, false};
  o.schedule = ScheduleOptions{ScheduleKind::kConstant, 1e-2, 0.0, 0, 10};
  return o;
}

double max_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

std::vector<at::Tensor> reference(EngineOptions o, int steps) {
  auto single = make_single_process_communicator();
  Mlp m;
  o.methods = MethodSet{};
  o.grad_acc_steps = 1;
  return train(m, *single, o, steps);
}

TEST(Engine, AccumulationEqualsOneBigBatch) {
  auto single = make_single_process_communicator();
  Mlp m;
  const auto accumulated = train(m, *single, base_options(/*acc=*/4), 5);
  EXPECT_LT(max_diff(accumulated, reference(base_options(1), 5)), 1e-6);
}

TEST(Engine, FusedAdamWEqualsPlain) {
  auto single = make_single_process_communicator();
  EngineOptions o = base_options(2);
  o.methods.free_lunch = true;
  Mlp m;
  EXPECT_LT(max_diff(train(m, *single, o, 5), reference(base_options(1), 5)), 1e-6);
}

TEST(Engine, ShardedOffloadOnOneRankIsBitIdentical) {
  auto single = make_single_process_communicator();
  for (Sharding s : {Sharding::kZero1, Sharding::kZero2, Sharding::kFsdpShardGradOp}) {
    EngineOptions o = base_options(1);
    o.methods = MethodSet{false, false, s, /*offloading=*/true};
    Mlp m;
    const auto sharded = train(m, *single, o, 5);
    EXPECT_EQ(max_diff(sharded, reference(base_options(1), 5)), 0.0) << to_string(s);
  }
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
  o.methods = MethodSet{false, false, Sharding::kNone, true};
  EXPECT_THROW(Engine(m.params(), *single, o), InputError);
  o.methods = MethodSet{false, false, Sharding::kZero2, false};
  EXPECT_THROW(Engine(m.params(), *single, o), InputError);  // one rank without offloading
}

// --- Under mpirun with 2 or 4 ranks. ---

TEST(MpiEngine, EveryStageMatchesOneProcessOnTheGlobalBatch) {
  if (!launched_with_several_ranks() || !mpi_available()) GTEST_SKIP() << "not under mpirun";
  auto world = make_mpi_communicator();
  for (Sharding s : {Sharding::kNone, Sharding::kZero1, Sharding::kZero2,
                     Sharding::kFsdpShardGradOp}) {
    for (bool offload : {false, true}) {
      if (offload && s == Sharding::kNone) continue;
      EngineOptions o = base_options(/*acc=*/2);
      o.methods = MethodSet{false, false, s, offload};
      o.clip_grad_norm = 0.5;  // the global norm must be right across shards
      Mlp m;
      EXPECT_LT(max_diff(train(m, *world, o, 4), [&] {
                  EngineOptions r = base_options(1);
                  r.clip_grad_norm = 0.5;
                  return reference(r, 4);
                }()),
                2e-6)
          << to_string(s) << (offload ? " + offload" : "") << " on " << world->size() << " ranks";
    }
  }
}

}  // namespace
}  // namespace gpudays
