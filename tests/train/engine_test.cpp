// The engine's methods against the plain path on a small MLP of two blocks with a fixed seed:
// accumulation, fused AdamW, sharding with offloading on one rank, clipping, fp16 loss scaling,
// rejected method sets, per-rank model-state memory against the ZeRO formulas; and, under mpirun
// with 2 or 4 ranks (MpiEngine.*), every sharding stage ends with the parameters of one process
// training on the same global batch.
#include <gtest/gtest.h>

#include <torch/nn/modules/linear.h>
#include <torch/nn/utils/clip_grad.h>

#include <ATen/ATen.h>

#include <cstdio>

#include "common/error.h"
#include "dist/communicator.h"
#include "plan/memory_model.h"
#include "train/cpu_memory.h"
#include "train/engine.h"

namespace gpudays {
namespace {

constexpr int64_t kGlobalBatch = 16;

// Two blocks (tanh(in x), then out h) run through a block runner, as a model's trunk runs them.
struct Mlp {
  int64_t width_in, width_out;
  torch::nn::Linear in{nullptr};
  torch::nn::Linear out{nullptr};
  models::BlockRunner runner;
  explicit Mlp(int64_t width_in = 8, int64_t hidden = 16, int64_t width_out = 4)
      : width_in(width_in), width_out(width_out) {
    at::manual_seed(3);
    in = torch::nn::Linear(width_in, hidden);
    out = torch::nn::Linear(hidden, width_out);
  }
  std::vector<at::Tensor> params() { return {in->weight, in->bias, out->weight, out->bias}; }
  models::BlockParameters blocks() { return {{in->weight, in->bias}, {out->weight, out->bias}}; }
  // The global dataset: sample i is the same whichever micro-batch or rank draws it.
  at::Tensor loss(int64_t first_sample, int64_t count) {
    std::vector<at::Tensor> xs, ys;
    for (int64_t i = first_sample; i < first_sample + count; ++i) {
      at::manual_seed(1000 + i);
      xs.push_back(at::randn({width_in}));
      ys.push_back(at::randn({width_out}));
    }
    const at::Tensor x = at::stack(xs), y = at::stack(ys);
    auto first = [this](const at::Tensor& h) { return at::tanh(in->forward(h)); };
    auto second = [this](const at::Tensor& h) { return out->forward(h); };
    const at::Tensor h = models::run_block(runner, 0, first, x);
    return (models::run_block(runner, 1, second, h) - y).pow(2).mean();
  }
};

// Trains `steps` steps; rank r takes samples [r * per_rank, (r + 1) * per_rank) of each step's
// global batch, in `acc` micro-batches.
std::vector<at::Tensor> train(Mlp& m, Communicator& comm, EngineOptions o, int steps) {
  Engine engine(m.params(), comm, o, m.blocks());
  m.runner = engine.block_runner({});
  const int64_t per_rank = kGlobalBatch / comm.size();
  const int64_t micro = per_rank / o.grad_acc_steps;
  for (int s = 0; s < steps; ++s) {
    engine.step([&](int64_t i) {
      return m.loss(s * kGlobalBatch + comm.rank() * per_rank + i * micro, micro);
    });
  }
  engine.gather_parameters();
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

// Live bytes at the optimizer of the second step (after backward: weights, gradients, masters
// and Adam state, no activations) of a wide MLP (about 0.4 M parameters).
struct ModelState {
  double measured_bytes = 0.0;
  double formula_bytes = 0.0;
};
ModelState model_state(Communicator& comm, Sharding sharding, Precision precision) {
  CpuMemoryScope scope;
  Mlp m(512, 512, 256);
  double params = 0.0;
  for (const at::Tensor& p : m.params()) params += static_cast<double>(p.numel());
  EngineOptions o = base_options(1);
  o.sharding = sharding;
  o.offload = false;
  o.precision = precision;
  int64_t live = 0;
  int64_t step = 0;
  o.phase_hook = [&](StepPhase p, int64_t) {
    if (p == StepPhase::kOptimizerBegin && step == 1) live = scope.stats().live_bytes;
  };
  Engine engine(m.params(), comm, o, m.blocks());
  m.runner = engine.block_runner({});
  const int64_t per_rank = kGlobalBatch / comm.size();
  for (step = 0; step < 2; ++step) {
    engine.step([&](int64_t) { return m.loss(comm.rank() * per_rank, per_rank); });
  }
  const MemoryBreakdown f = model_state_memory(params, precision, sharding, false, comm.size());
  return {static_cast<double>(live), f.model_state_bytes()};
}

TEST(Engine, UnshardedModelStateMemoryEqualsTheFormula) {
  auto single = make_single_process_communicator();
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    const ModelState m = model_state(*single, Sharding::kNone, p);
    EXPECT_NEAR(m.measured_bytes, m.formula_bytes, 0.10 * m.formula_bytes) << to_string(p);
  }
}

// --- Under mpirun with 2 or 4 ranks. ---

// Per-rank model-state memory moves as the ZeRO formulas say (plan/memory_model.h), within 10%.
TEST(MpiEngine, ModelStateMemoryPerStageEqualsTheFormulas) {
  if (!launched_with_several_ranks() || !mpi_available()) GTEST_SKIP() << "not under mpirun";
  auto world = make_mpi_communicator();
  for (Sharding s : {Sharding::kNone, Sharding::kZero1, Sharding::kZero2, Sharding::kZero3}) {
    for (Precision p : {Precision::kFp32, Precision::kBf16}) {
      const ModelState m = model_state(*world, s, p);
      EXPECT_NEAR(m.measured_bytes, m.formula_bytes, 0.10 * m.formula_bytes)
          << to_string(s) << " " << to_string(p) << " on " << world->size() << " ranks";
      if (world->rank() == 0) {
        std::printf("model state %s %s %d ranks: measured %.0f, formula %.0f bytes\n",
                    to_string(s).c_str(),
                    to_string(p).c_str(),
                    world->size(),
                    m.measured_bytes,
                    m.formula_bytes);
      }
    }
  }
}

// bf16 and fp16 (loss-scaled) working weights at stage >= 1 (fp32 masters) train as the fp32 run
// does, to half-precision rounding.
TEST(MpiEngine, MixedPrecisionStagesTrackTheFp32Run) {
  if (!launched_with_several_ranks() || !mpi_available()) GTEST_SKIP() << "not under mpirun";
  auto world = make_mpi_communicator();
  for (Precision p : {Precision::kBf16, Precision::kFp16}) {
    for (Sharding s : {Sharding::kNone, Sharding::kZero1, Sharding::kZero2, Sharding::kZero3}) {
      EngineOptions o = base_options(2);
      o.sharding = s;
  o.offload = false;
      o.precision = p;
      o.clip_grad_norm = 0.5;  // unscaled, agreed overflow flag and norm across the slices
      Mlp m;
      EngineOptions r = base_options(1);
      r.clip_grad_norm = 0.5;
      EXPECT_LT(max_diff(train(m, *world, o, 4), reference(r, 4)), 2e-2)
          << to_string(s) << " " << to_string(p) << " on " << world->size() << " ranks";
    }
  }
}

TEST(MpiEngine, EveryStageMatchesOneProcessOnTheGlobalBatch) {
  if (!launched_with_several_ranks() || !mpi_available()) GTEST_SKIP() << "not under mpirun";
  auto world = make_mpi_communicator();
  for (Sharding s : {Sharding::kNone,
                     Sharding::kZero1,
                     Sharding::kZero2,
                     Sharding::kFsdpShardGradOp,
                     Sharding::kZero3,
                     Sharding::kFsdpFullShard}) {
    for (bool offload : {false, true}) {
      if (offload && s == Sharding::kNone) continue;
      EngineOptions o = base_options(/*acc=*/2);
      o.sharding = s;
  o.offload = offload;
      o.clip_grad_norm = 0.5;  // the global norm must be right across shards
      Mlp m;
      EXPECT_LT(max_diff(train(m, *world, o, 4),
                         [&] {
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
