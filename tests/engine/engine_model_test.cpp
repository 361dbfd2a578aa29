// Sharding on real zoo models (tiny GPT-NeoX, tiny Llama with grouped-query attention) through
// make_engine, which wraps the model's block runner: stage 2 reduces each block's gradient as its
// backward ends, stage 3 also gathers each block's weights just before use. On one rank (with
// offloading) the result is bit-identical to the plain path; under mpirun (MultiRankEngine.*) the
// losses and the pre-clipping gradient norms track one process on the global batch.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "catalog/model_loader.h"
#include "distributed/communicator.h"
#include "distributed/world.h"
#include "engine/apply_methods.h"
#include "engine/cpu_memory.h"
#include "engine/device.h"
#include "engine/engine.h"
#include "engine/trainable.h"

namespace gpudays {
namespace {

struct TrainRun {
  std::vector<double> losses;      // mean over every rank's micro-batches, per step
  std::vector<double> grad_norms;  // before clipping, per step
  std::vector<at::Tensor> params;
};

// The causal LMs trained here (tests/models/data/<name>.toml).
const char* const kTinyLms[] = {"tiny-gpt-neox", "tiny-llama"};

// Both the trainable's and the engine's methods come from apply_methods, as in a trial.
TrainRun train_tiny_lm(Communicator& comm,
                       const MethodSet& methods,
                       int steps,
                       Precision precision = Precision::kFp32,
                       const std::string& name = "tiny-gpt-neox") {
  ModelSpec spec = load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/" + name + ".toml");
  spec.recipe.precision = precision;
  const int64_t global = spec.recipe.global_batch;  // 8
  const int64_t per_rank = global / comm.size();
  const int64_t micro = 2;  // the same micro-batches (synthetic data is drawn per micro-batch)
  at::manual_seed(11);      // the initial weights
  const MethodOptions options =
      apply_methods(Configuration{methods, micro, per_rank / micro}, spec.recipe, at::kCPU);
  auto model = make_trainable(spec, options.trainable);
  auto engine = make_engine(*model, comm, options.engine);
  TrainRun run;
  for (int s = 0; s < steps; ++s) {
    const StepResult r = engine->step([&](int64_t i) {
      return model->micro_loss(s * global + comm.rank() * per_rank + i * micro, micro);
    });
    run.grad_norms.push_back(r.grad_norm);
    double loss = r.loss;
    comm.all_reduce(&loss, 1, DType::kFloat64, ReduceOp::kSum);
    run.losses.push_back(loss / comm.size());
  }
  engine->gather_parameters();
  for (const at::Tensor& p : model->parameters()) run.params.push_back(p.detach().clone());
  return run;
}

double max_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

TEST(Engine, EveryStageOnOneRankIsBitIdenticalOnGptNeox) {
  auto single = make_single_process_communicator();
  const TrainRun plain = train_tiny_lm(*single, MethodSet{}, 3);
  for (Sharding s : {Sharding::kZero1, Sharding::kZero2, Sharding::kZero3}) {
    for (bool checkpointing : {false, true}) {
      const TrainRun r = train_tiny_lm(*single, MethodSet{false, checkpointing, s, true}, 3);
      EXPECT_EQ(max_diff(r.params, plain.params), 0.0)
          << to_string(s) << (checkpointing ? " + checkpointing" : "");
    }
  }
}

// The same on the llama family (grouped-query attention, RMSNorm, SwiGLU), every stage the
// engine has, each with and without checkpointing, all offloaded: 3 steps of 4 micro-batches
// (Adam's state and the gathered weights carry over steps), bit-identical losses and weights.
TEST(Engine, EveryStageOnOneRankIsBitIdenticalOnLlama) {
  auto single = make_single_process_communicator();
  const TrainRun plain = train_tiny_lm(*single, MethodSet{}, 3, Precision::kFp32, "tiny-llama");
  EXPECT_NE(plain.losses.front(), plain.losses.back());  // it trained
  for (Sharding s : {Sharding::kZero1,
                     Sharding::kZero2,
                     Sharding::kFsdpShardGradOp,
                     Sharding::kZero3,
                     Sharding::kFsdpFullShard}) {
    for (bool checkpointing : {false, true}) {
      const TrainRun r = train_tiny_lm(
          *single, MethodSet{false, checkpointing, s, true}, 3, Precision::kFp32, "tiny-llama");
      EXPECT_EQ(r.losses, plain.losses) << to_string(s) << (checkpointing ? " + ckpt" : "");
      EXPECT_EQ(max_diff(r.params, plain.params), 0.0)
          << to_string(s) << (checkpointing ? " + checkpointing" : "");
    }
  }
}

// Autocast caches the bf16 copies of the weights; checkpointing's recompute in backward refills
// the cache after the forward's scope cleared it. Left filled, step 2's first forward would run on
// step 1's weights. Over 3 optimizer steps of 2 micro-steps each, checkpointing changes nothing:
// the recompute repeats the forward's operations on the same inputs, so equal bit for bit.
// Both causal LMs (llama: RMSNorm's fp32 weight times the bf16 normalised input, as transformers).
TEST(Engine, CheckpointingUnderBf16AutocastTrainsOnCurrentWeights) {
  auto single = make_single_process_communicator();
  for (const char* name : kTinyLms) {
    const TrainRun plain = train_tiny_lm(*single, MethodSet{}, 3, Precision::kBf16, name);
    const TrainRun checkpointed = train_tiny_lm(
        *single, MethodSet{false, true, Sharding::kNone, false}, 3, Precision::kBf16, name);
    EXPECT_EQ(checkpointed.losses, plain.losses) << name;
    EXPECT_EQ(max_diff(checkpointed.params, plain.params), 0.0) << name;
    // The runs trained (the weights moved), and the losses are not all equal by accident.
    EXPECT_NE(plain.losses.front(), plain.losses.back()) << name;
  }
}

// Live bytes at the peak of one optimizer step with one micro-batch of `micro` samples, model and
// engine built inside `scope` (throws c10::OutOfMemoryError above its cap).
int64_t step_peak(CpuMemoryScope& scope, int64_t micro) {
  const ModelSpec spec =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
  scope.reset_peak();
  auto model = make_trainable(spec, {false, false, 1234});
  auto comm = make_single_process_communicator();
  auto engine = make_engine(
      *model, *comm, apply_methods(Configuration{MethodSet{}, 4, 1}, spec.recipe, at::kCPU).engine);
  engine->step([&](int64_t) { return model->micro_loss(0, micro); });
  return scope.stats().peak_bytes;
}

// Peak memory grows linearly with the micro-batch (measured at 16 and 32 samples); a cap halfway
// between the peaks this predicts for 64 and 128 samples lets 64 run and stops 128 with the
// out-of-memory error CUDA raises, after which everything is freed and training carries on.
TEST(Engine, MemoryCapStopsAtTheExpectedMicroBatchAndRecovers) {
  double peak16 = 0.0, peak32 = 0.0;
  {
    CpuMemoryScope uncapped;
    peak16 = static_cast<double>(step_peak(uncapped, 16));
    peak32 = static_cast<double>(step_peak(uncapped, 32));
  }
  const double per_sample = (peak32 - peak16) / 16.0;
  ASSERT_GT(per_sample, 0.0);
  const auto predicted = [&](int64_t micro) { return peak16 + per_sample * (micro - 16); };
  CpuMemoryScope capped(static_cast<int64_t>((predicted(64) + predicted(128)) / 2.0));
  const int64_t before = capped.stats().live_bytes;
  EXPECT_THROW(step_peak(capped, 128), c10::OutOfMemoryError);
  EXPECT_EQ(capped.stats().live_bytes, before);                      // nothing leaked
  const double peak64 = static_cast<double>(step_peak(capped, 64));  // and it carries on
  EXPECT_NEAR(peak64, predicted(64), 0.05 * predicted(64));
}

// Steps through MicroBatches (load into static buffers, then the loss; what CUDA graphs need).
std::vector<double> train_loaded(const at::Device& device,
                                 bool cuda_graphs,
                                 int steps,
                                 bool* captured = nullptr) {
  const ModelSpec spec =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
  at::manual_seed(11);
  TrainableOptions t{true, false, 1234};
  t.device = device;
  auto model = make_trainable(spec, t);
  auto comm = make_single_process_communicator();
  EngineOptions o =
      apply_methods(Configuration{MethodSet{true, false, Sharding::kNone, false}, 4, 2},
                    spec.recipe,
                    at::kCPU)
          .engine;
  o.cuda_graphs = cuda_graphs;
  auto engine = make_engine(*model, *comm, o);
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    losses.push_back(engine
                         ->step(micro_batches(
                             *model, [s](int64_t i) { return s * 8 + i * 4; }, 4))
                         .loss);
  }
  if (captured != nullptr) *captured = engine->cuda_graph_captured();
  return losses;
}

TEST(Engine, LoadedMicroBatchesEqualMicroLosses) {
  const ModelSpec spec =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
  at::manual_seed(11);
  auto model = make_trainable(spec, {true, false, 1234});
  auto comm = make_single_process_communicator();
  auto engine =
      make_engine(*model,
                  *comm,
                  apply_methods(Configuration{MethodSet{true, false, Sharding::kNone, false}, 4, 2},
                                spec.recipe,
                                at::kCPU)
                      .engine);
  std::vector<double> losses;
  for (int s = 0; s < 4; ++s) {
    losses.push_back(
        engine->step([&](int64_t i) { return model->micro_loss(s * 8 + i * 4, 4); }).loss);
  }
  EXPECT_EQ(losses, train_loaded(at::kCPU, true, 4));
}

// The captured and replayed micro-step trains as the eager one does.
TEST(Engine, CudaGraphMicroStepEqualsEager_CUDA) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU";
  bool captured = false;
  const std::vector<double> graphed = train_loaded(at::kCUDA, true, 6, &captured);
  const std::vector<double> eager = train_loaded(at::kCUDA, false, 6);
  EXPECT_TRUE(captured);
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(graphed[i], eager[i], 1e-5 * eager[i]);
}

// On 2 and 4 ranks, for GPT-NeoX and Llama.
TEST(MultiRankEngine, ShardedTinyLmsTrackOneProcess) {
  if (!launched_with_several_ranks()) GTEST_SKIP() << "not under mpirun";
  auto world = make_communicator(RankDevice::kCpu, /*cuda_device=*/0);
  auto single = make_single_process_communicator();
  for (const char* name : kTinyLms) {
    const TrainRun plain = train_tiny_lm(*single, MethodSet{}, 4, Precision::kFp32, name);
    for (Sharding s : {Sharding::kNone, Sharding::kZero2, Sharding::kZero3}) {
      for (bool checkpointing : {false, true}) {
        const TrainRun r = train_tiny_lm(
            *world, MethodSet{false, checkpointing, s, false}, 4, Precision::kFp32, name);
        const std::string what =
            std::string(name) + " " + to_string(s) + (checkpointing ? " + checkpointing" : "");
        for (size_t i = 0; i < plain.losses.size(); ++i) {
          EXPECT_NEAR(r.losses[i], plain.losses[i], 1e-5 * plain.losses[i]) << what << " " << i;
          // The gradient's scale (Adam hides it in the losses); measured within 2e-8 relative.
          EXPECT_NEAR(r.grad_norms[i], plain.grad_norms[i], 1e-6 * plain.grad_norms[i])
              << what << " step " << i;
        }
        EXPECT_NE(r.losses.front(), r.losses.back()) << what;  // it trained
      }
    }
  }
}

}  // namespace
}  // namespace gpudays
