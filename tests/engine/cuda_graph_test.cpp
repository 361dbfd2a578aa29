// The micro-step graph's sequence without a GPU, through a backend that records what it is asked
// (warm-up, capture, replay, release) and can fail on demand: eager warm-up calls, one capture,
// replays; an out-of-memory error during capture propagates unchanged with the capture released;
// any other failure runs eagerly for good; new input buffers recapture. And the engine with the
// CPU stand-in backend trains as the eager engine does over several steps.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "catalog/model_loader.h"
#include "distributed/communicator.h"
#include "engine/apply_methods.h"
#include "engine/cuda_graph.h"
#include "engine/engine.h"
#include "engine/trainable.h"

namespace gpudays {
namespace {

enum class Failure { kNone, kOutOfMemory, kOther };

// Records the calls; capture fails as told; replay adds one to the static output.
struct ScriptedBackend final : GraphBackend {
  std::vector<std::string>* log;
  Failure failure = Failure::kNone;
  at::Tensor output = at::zeros({});
  explicit ScriptedBackend(std::vector<std::string>* log, Failure f) : log(log), failure(f) {}
  at::Tensor warm_up(const MicroStepFn& fn) override {
    log->push_back("warm_up");
    return fn();
  }
  at::Tensor capture(const MicroStepFn&) override {
    log->push_back("capture");
    if (failure == Failure::kOutOfMemory) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory during capture");
    }
    if (failure == Failure::kOther) TORCH_CHECK(false, "operation not permitted when capturing");
    return output;
  }
  void replay() override {
    log->push_back("replay");
    output.add_(1);
  }
  void release() noexcept override { log->push_back("release"); }
};

MicroStepGraph scripted_graph(std::vector<std::string>* log, Failure failure = Failure::kNone) {
  return MicroStepGraph(std::make_unique<ScriptedBackend>(log, failure));
}

const MicroStepFn kEager = [] { return at::full({}, 100.0); };

TEST(MicroStepGraph, WarmsUpTwiceCapturesOnceThenReplays) {
  std::vector<std::string> log;
  MicroStepGraph graph = scripted_graph(&log);
  EXPECT_EQ(graph.micro_steps_before_replay(), 3);
  EXPECT_EQ(graph.run(kEager).item<double>(), 100.0);
  EXPECT_EQ(graph.run(kEager).item<double>(), 100.0);
  EXPECT_FALSE(graph.captured());
  EXPECT_EQ(graph.run(kEager).item<double>(), 1.0);  // the capture's own replay
  EXPECT_TRUE(graph.captured());
  EXPECT_EQ(graph.run(kEager).item<double>(), 2.0);
  EXPECT_EQ(log, (std::vector<std::string>{"warm_up", "warm_up", "capture", "replay", "replay"}));
  EXPECT_EQ(graph.counts(), (GraphCounts{.eager_calls = 2, .captures = 1, .replays = 2}));
}

TEST(MicroStepGraph, OutOfMemoryDuringCaptureIsTheCallersResult) {
  std::vector<std::string> log;
  MicroStepGraph graph = scripted_graph(&log, Failure::kOutOfMemory);
  graph.run(kEager);
  graph.run(kEager);
  EXPECT_THROW(graph.run(kEager), c10::OutOfMemoryError);
  EXPECT_EQ(log.back(), "release");
  EXPECT_FALSE(graph.fell_back());  // not a reason to run eagerly: the micro-batch is too large
}

TEST(MicroStepGraph, AnyOtherCaptureFailureRunsEagerlyForGood) {
  std::vector<std::string> log;
  MicroStepGraph graph = scripted_graph(&log, Failure::kOther);
  graph.run(kEager);
  graph.run(kEager);
  EXPECT_EQ(graph.run(kEager).item<double>(), 100.0);  // the failed micro-step, run eagerly
  EXPECT_EQ(graph.run(kEager).item<double>(), 100.0);
  EXPECT_TRUE(graph.fell_back());
  EXPECT_EQ(graph.fallback_reason(), "operation not permitted when capturing");
  EXPECT_EQ(std::count(log.begin(), log.end(), "capture"), 1);
  EXPECT_EQ(graph.counts().eager_calls, 4);
}

TEST(MicroStepGraph, NewInputBuffersRecaptureAndChangingShapesStopIt) {
  std::vector<std::string> log;
  MicroStepGraph graph = scripted_graph(&log);
  for (int i = 0; i < 3; ++i) graph.run(kEager);
  graph.invalidate();
  EXPECT_FALSE(graph.captured());
  for (int i = 0; i < 3; ++i) graph.run(kEager);
  EXPECT_TRUE(graph.captured());
  EXPECT_EQ(graph.counts().captures, 2);
  graph.invalidate();  // the second change of a captured graph
  for (int i = 0; i < 3; ++i) graph.run(kEager);
  graph.invalidate();  // the third: the shapes keep changing
  EXPECT_TRUE(graph.fell_back());
  EXPECT_EQ(graph.run(kEager).item<double>(), 100.0);
}

// Trains the tiny GPT-NeoX with free-lunch's methods; `graphs`: through the CPU stand-in backend.
std::vector<double> train_tiny(bool graphs, int steps, GraphCounts* counts = nullptr) {
  const ModelSpec spec =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
  at::manual_seed(11);
  const MethodOptions methods = apply_methods(
      Configuration{MethodSet{true, false, Sharding::kNone, false}, 4, 2}, spec.recipe, at::kCPU);
  auto model = make_trainable(spec, methods.trainable);
  auto comm = make_single_process_communicator();
  EngineOptions o = methods.engine;
  EXPECT_TRUE(o.cuda_graphs);  // free-lunch without checkpointing asks for graphs
  if (graphs) {
    o.graph_backend = [] { return make_rerun_graph_backend(); };
  } else {
    o.cuda_graphs = false;
  }
  auto engine = make_engine(*model, *comm, o);
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const auto first = [s](int64_t i) { return s * 8 + i * 4; };
    losses.push_back(engine->step(micro_batches(*model, first, 4)).loss);
  }
  if (counts != nullptr && engine->micro_step_graph() != nullptr) {
    *counts = engine->micro_step_graph()->counts();
  }
  EXPECT_EQ(engine->micro_step_graph() != nullptr, graphs);
  return losses;
}

// Four steps of two micro-steps: warm-up, capture and replays all within the first two steps.
TEST(MicroStepGraph, GraphedEngineTrainsAsTheEagerOneOverSeveralSteps) {
  GraphCounts counts;
  const std::vector<double> graphed = train_tiny(true, 4, &counts);
  EXPECT_EQ(graphed, train_tiny(false, 4));
  EXPECT_EQ(counts, (GraphCounts{.eager_calls = 2, .captures = 1, .replays = 6}));
}

}  // namespace
}  // namespace gpudays
