// The trial runner library in-process, where the command-line tests (engine/bench_cli_test.cpp) do
// not reach: the phase clock on a scripted sequence of phases and times, out-of-memory
// classification and the memory-limit rule, the slowest-rank reduction on one process, the timed
// step loop, and whole trials of a tiny model (whole, parts with their check, the memory cap).
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../models/torch_test_util.h"

#include "catalog/model_loader.h"
#include "common/error.h"
#include "engine/cuda_graph.h"
#include "engine/trainable.h"
#include "trial/out_of_memory.h"
#include "trial/phase_clock.h"
#include "trial/step_loop.h"
#include "trial/trial_runner.h"

namespace gpudays {
namespace {

// A clock that reads the times it is given, one per boundary.
std::function<double()> scripted_clock(std::vector<double> times_s) {
  auto next = std::make_shared<size_t>(0);
  return [times_s = std::move(times_s), next] { return times_s.at((*next)++); };
}

// The engine's boundaries for one step of `acc` micro-steps.
void step_phases(PhaseClock& clock, int64_t acc) {
  for (int64_t i = 0; i < acc; ++i) {
    clock.on_phase(StepPhase::kMicroStepBegin, i);
    clock.on_phase(StepPhase::kMicroStepEnd, i);
  }
  clock.on_phase(StepPhase::kOptimizerBegin, -1);
  clock.on_phase(StepPhase::kOptimizerEnd, -1);
}

TEST(PhaseClock, SortsTheTimedStepsPartsAndTheyCompose) {
  // Per step: micro-step 0 takes 1 s, micro-step 1 (the last) 2 s, the optimizer 0.5 s; the
  // warm-up step's figures (10 s each) are not recorded.
  PhaseClock clock({.device = c10::kCPU,
                    .grad_acc_steps = 2,
                    .now_s = scripted_clock({0,
                                             10,
                                             10,
                                             20,
                                             20,
                                             30,  // warm-up
                                             100,
                                             101,
                                             101,
                                             103,
                                             103,
                                             103.5,  // timed
                                             200,
                                             201,
                                             201,
                                             203,
                                             203,
                                             203.5})});
  step_phases(clock, 2);
  clock.set_recording(true);
  step_phases(clock, 2);
  step_phases(clock, 2);
  EXPECT_EQ(clock.parts().micro_s, (std::vector<double>{1, 1}));
  EXPECT_EQ(clock.parts().last_micro_s, (std::vector<double>{2, 2}));
  EXPECT_EQ(clock.parts().optimizer_s, (std::vector<double>{0.5, 0.5}));
  // A step of 8 micro-steps: 7 x 1 + 2 + 0.5.
  EXPECT_DOUBLE_EQ(compose_step(clock.parts(), 8).step.median_s, 9.5);
}

TEST(PhaseClock, OneMicroStepIsTheLastAndAccumulationBelowOneIsRejected) {
  PhaseClock clock(
      {.device = c10::kCPU, .grad_acc_steps = 1, .now_s = scripted_clock({0, 3, 3, 4})});
  clock.set_recording(true);
  step_phases(clock, 1);
  EXPECT_TRUE(clock.parts().micro_s.empty());
  EXPECT_EQ(clock.parts().last_micro_s, (std::vector<double>{3}));
  EXPECT_EQ(clock.parts().optimizer_s, (std::vector<double>{1}));
  EXPECT_THROW(PhaseClock({.device = c10::kCPU, .grad_acc_steps = 0, .now_s = {}}), InputError);
}

[[noreturn]] void throw_out_of_memory(const std::string& message) {
  TORCH_CHECK_WITH(OutOfMemoryError, false, message);
  throw std::logic_error("unreachable");
}

TEST(OutOfMemory, OnlyTheOutOfMemoryErrorIsOne) {
  try {
    throw_out_of_memory("CUDA out of memory");
  } catch (const std::exception& e) {
    EXPECT_TRUE(is_out_of_memory(e));
  }
  EXPECT_FALSE(is_out_of_memory(c10::Error({__func__, __FILE__, __LINE__}, "other")));
  EXPECT_FALSE(is_out_of_memory(std::runtime_error("other")));
  EXPECT_FALSE(is_out_of_memory(InputError("other")));
}

TEST(OutOfMemory, BecomesAnOomMeasurementAndOtherErrorsPropagate) {
  TrialMeasurement ok;
  ok.status = TrialStatus::kOk;
  ok.step_time_median_s = 1.5;
  EXPECT_EQ(measure_or_out_of_memory([&] { return ok; }, StepTiming::kWhole).step_time_median_s,
            1.5);
  const TrialMeasurement oom = measure_or_out_of_memory(
      [&]() -> TrialMeasurement { throw_out_of_memory(std::string(300, 'x')); },
      StepTiming::kParts);
  EXPECT_EQ(oom.status, TrialStatus::kOutOfMemory);
  EXPECT_EQ(oom.timing, StepTiming::kParts);
  EXPECT_EQ(oom.message, std::string(200, 'x'));  // the first 200 characters, no backtrace
  EXPECT_THROW(measure_or_out_of_memory([&]() -> TrialMeasurement { throw InputError("bad"); },
                                        StepTiming::kWhole),
               InputError);
}

TEST(OutOfMemory, APeakOverTheLimitOfAnUncappedDeviceIsOne) {
  TrialMeasurement r;
  r.status = TrialStatus::kOk;
  r.peak_memory_bytes = 2 << 20;
  count_peak_over_limit_as_oom(r, /*limit_bytes=*/0);  // no limit
  count_peak_over_limit_as_oom(r, /*limit_bytes=*/2 << 20);
  EXPECT_EQ(r.status, TrialStatus::kOk);
  count_peak_over_limit_as_oom(r, /*limit_bytes=*/1 << 20);
  EXPECT_EQ(r.status, TrialStatus::kOutOfMemory);
  EXPECT_NE(r.message.find("over the memory limit"), std::string::npos) << r.message;
  TrialMeasurement crashed;  // only ok measurements change
  crashed.peak_memory_bytes = 2 << 20;
  count_peak_over_limit_as_oom(crashed, /*limit_bytes=*/1 << 20);
  EXPECT_EQ(crashed.status, TrialStatus::kCrash);
}

// Where the reserved peak is recorded (CUDA), it is what must fit: a graph's pool keeps memory the
// allocated peak does not show.
TEST(OutOfMemory, TheReservedPeakIsWhatMustFit) {
  TrialMeasurement r;
  r.status = TrialStatus::kOk;
  r.peak_memory_bytes = int64_t{1} << 30;
  r.peak_reserved_bytes = int64_t{3} << 30;
  count_peak_over_limit_as_oom(r, /*limit_bytes=*/int64_t{2} << 30);
  EXPECT_EQ(r.status, TrialStatus::kOutOfMemory);
  EXPECT_EQ(r.message, "peak 3.0 GiB reserved over the memory limit 2.0 GiB");
}

TEST(StepLoop, TheSlowestRankOfOneIsItself) {
  const auto comm = make_single_process_communicator();
  double a = 1.25, b = -3.0;
  take_slowest_rank(*comm, {&a, &b});
  EXPECT_EQ(a, 1.25);
  EXPECT_EQ(b, -3.0);
}

ModelSpec tiny_model() {
  return load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
}

TEST(StepLoop, TimesTheTimedStepsAndReportsEveryPart) {
  const ModelSpec model = tiny_model();
  const auto comm = make_single_process_communicator();
  const auto trainable = make_trainable(model, {});
  PhaseClock clock({.device = c10::kCPU, .grad_acc_steps = 2, .now_s = {}});
  EngineOptions engine;  // plain fp32 steps of 2 micro-steps
  engine.grad_acc_steps = 2;
  const StepLoopResult run = run_steps(*trainable,
                                       *comm,
                                       c10::kCPU,
                                       engine,
                                       {.warmup_steps = 1,
                                        .timed_steps = 3,
                                        .micro_batch_size = 2,
                                        .global_batch = model.recipe.global_batch},
                                       &clock);
  const std::vector<double>& seconds = run.seconds;
  ASSERT_EQ(seconds.size(), 3u);
  EXPECT_EQ(run.warmup_steps, 1);
  EXPECT_EQ(run.cuda_graph, "");  // no graph applies
  for (double s : seconds) EXPECT_GT(s, 0.0);
  EXPECT_EQ(clock.parts().micro_s.size(), 3u);  // the timed steps' only
  EXPECT_EQ(clock.parts().last_micro_s.size(), 3u);
  EXPECT_EQ(clock.parts().optimizer_s.size(), 3u);
}

// A graph warms up twice and captures on the third micro-step: the timed steps start after it.
TEST(StepLoop, WarmUpCoversTheGraphsWarmUpAndCapture) {
  EXPECT_EQ(warmup_steps_for(/*requested=*/1, /*micro_steps_before_replay=*/3, 1), 3);
  EXPECT_EQ(warmup_steps_for(1, 3, 2), 2);
  EXPECT_EQ(warmup_steps_for(1, 3, 3), 1);
  EXPECT_EQ(warmup_steps_for(1, 3, 64), 1);
  EXPECT_EQ(warmup_steps_for(5, 3, 1), 5);
  EXPECT_EQ(warmup_steps_for(1, 0, 1), 1);  // no graph
}

// Through the engine and the graph's interface (the CPU stand-in backend): at accumulation 1 and
// 2, one warm-up step requested, every timed micro-step is a replay.
TEST(StepLoop, TimedMicroStepsAreGraphReplays) {
  const ModelSpec model = tiny_model();
  const auto comm = make_single_process_communicator();
  for (int64_t acc : {1, 2}) {
    const auto trainable = make_trainable(model, {});
    EngineOptions engine;
    engine.grad_acc_steps = acc;
    engine.cuda_graphs = true;
    engine.graph_backend = [] { return make_rerun_graph_backend(); };
    const StepLoopResult run = run_steps(*trainable,
                                         *comm,
                                         c10::kCPU,
                                         engine,
                                         {.warmup_steps = 1,
                                          .timed_steps = 3,
                                          .micro_batch_size = 2,
                                          .global_batch = model.recipe.global_batch});
    EXPECT_EQ(run.warmup_steps, acc == 1 ? 3 : 2) << acc;
    EXPECT_EQ(run.seconds.size(), 3u);
    EXPECT_EQ(run.cuda_graph, "replayed") << acc;
  }
}

TrialSpec tiny_trial(const ModelSpec& model, StepTiming timing) {
  TrialSpec spec;
  spec.model_file = "tiny-gpt-neox.toml";
  spec.device = "cpu";
  spec.config.methods.free_lunch = true;
  spec.config.micro_batch_size = 2;
  spec.config.grad_acc_steps = model.recipe.global_batch / 2;
  spec.timing = timing;
  return spec;
}

TEST(TrialRunner, WholeStepsOfATinyModel) {
  const ModelSpec model = tiny_model();
  TrialRank rank = join_trial("cpu");
  ASSERT_EQ(rank.comm->size(), 1);
  const TrialMeasurement r =
      run_trial(tiny_trial(model, StepTiming::kWhole), model, *rank.comm, rank.device);
  ASSERT_EQ(r.status, TrialStatus::kOk) << r.message;
  EXPECT_EQ(r.timing, StepTiming::kWhole);
  EXPECT_EQ(r.steps_timed, 3);
  EXPECT_GT(r.step_time_min_s, 0.0);
  EXPECT_LE(r.step_time_min_s, r.step_time_median_s);
  EXPECT_LE(r.step_time_median_s, r.step_time_max_s);
  EXPECT_GT(r.peak_memory_bytes, 0);
  EXPECT_EQ(r.device_name.rfind("cpu", 0), 0u) << r.device_name;
  EXPECT_FALSE(r.torch_version.empty());
}

// The summary's rows of a profile (trial/kernel_profile.h): name -> count, for one kind.
std::map<std::string, int64_t> profile_counts(const std::string& tsv_path,
                                              const std::string& kind) {
  std::ifstream in(tsv_path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "kind\tname\tcount\ttotal_us\tus_per_step");
  std::map<std::string, int64_t> counts;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string row_kind, name, count;
    std::getline(row, row_kind, '\t');
    std::getline(row, name, '\t');
    std::getline(row, count, '\t');
    if (row_kind == kind) counts[name] = std::stoll(count);
  }
  return counts;
}

// The timed steps' profile: a Chrome trace and a summary of torch's operators that counts the
// timed steps only (the same count per step over 3 timed steps and over 2: the warm-up step is
// outside the window).
TEST(TrialRunner, ProfileCoversTheTimedStepsOnly) {
  const ModelSpec model = tiny_model();
  TrialRank rank = join_trial("cpu");
  const std::string dir = test::scratch_dir("trial-profile");
  std::map<int64_t, int64_t> linears_per_step;
  for (const int64_t timed : {3, 2}) {
    TrialSpec spec = tiny_trial(model, StepTiming::kWhole);
    spec.timed_steps = timed;
    spec.profile_path = dir + "/profile-" + std::to_string(timed) + ".json";
    const TrialMeasurement r = run_trial(spec, model, *rank.comm, rank.device);
    ASSERT_EQ(r.status, TrialStatus::kOk) << r.message;
    std::ifstream trace(spec.profile_path);
    ASSERT_TRUE(trace.good()) << spec.profile_path;
    EXPECT_TRUE(nlohmann::json::parse(trace).contains("traceEvents"));
    const auto counts = profile_counts(spec.profile_path + ".kernels.tsv", "cpu_op");
    ASSERT_TRUE(counts.contains("aten::linear")) << counts.size() << " rows";
    const int64_t linears = counts.at("aten::linear");
    EXPECT_EQ(linears % timed, 0) << linears;
    linears_per_step[timed] = linears / timed;
  }
  EXPECT_GT(linears_per_step[3], 0);
  EXPECT_EQ(linears_per_step[3], linears_per_step[2]);
}

// The trial row names the selective scan that ran: the CPU kernel under free-lunch on the CPU, the
// plain scan without it; nothing for a family without one, and no graph on the CPU.
TEST(TrialRunner, MambaTrialsRecordTheScanThatRan) {
  const ModelSpec mamba =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-mamba.toml");
  TrialRank rank = join_trial("cpu");
  for (bool free_lunch : {true, false}) {
    TrialSpec spec = tiny_trial(mamba, StepTiming::kWhole);
    spec.model_file = "tiny-mamba.toml";
    spec.config.methods.free_lunch = free_lunch;
    const TrialMeasurement r = run_trial(spec, mamba, *rank.comm, rank.device);
    ASSERT_EQ(r.status, TrialStatus::kOk) << r.message;
    EXPECT_EQ(r.scan, free_lunch ? "fused-cpu" : "plain");
    EXPECT_EQ(r.cuda_graph, "");
  }
  const ModelSpec neox = tiny_model();
  EXPECT_EQ(run_trial(tiny_trial(neox, StepTiming::kWhole), neox, *rank.comm, rank.device).scan,
            "");
}

TEST(TrialRunner, PartsOfATinyModelAreCheckedAgainstWholeSteps) {
  const ModelSpec model = tiny_model();
  TrialRank rank = join_trial("cpu");
  TrialSpec spec = tiny_trial(model, StepTiming::kParts);
  spec.check_steps = 3;
  const TrialMeasurement r = run_trial(spec, model, *rank.comm, rank.device);
  ASSERT_EQ(r.status, TrialStatus::kOk) << r.message;
  EXPECT_EQ(r.timing, StepTiming::kParts);
  EXPECT_GT(r.micro_step_time_s, 0.0);
  EXPECT_GT(r.last_micro_step_time_s, 0.0);
  EXPECT_GT(r.optimizer_time_s, 0.0);
  EXPECT_GT(r.check_step_time_s, 0.0);
  // Which of the two depends on this machine's load; each keeps its own step time.
  ASSERT_TRUE(r.timing_check == "agrees" || r.timing_check == "disagrees") << r.timing_check;
  if (r.timing_check == "agrees") {
    const double acc = static_cast<double>(spec.config.grad_acc_steps);
    EXPECT_NEAR(r.step_time_median_s,
                (acc - 1) * r.micro_step_time_s + r.last_micro_step_time_s + r.optimizer_time_s,
                1e-9);
  } else {
    EXPECT_EQ(r.step_time_median_s, r.check_step_time_s);
  }
}

TEST(TrialRunner, TheMemoryCapIsAnOomResultAndABadBatchAnError) {
  const ModelSpec model = tiny_model();
  TrialRank rank = join_trial("cpu");
  TrialSpec capped = tiny_trial(model, StepTiming::kWhole);
  capped.memory_limit_bytes = 64 << 10;  // 64 KiB: not even the weights
  const TrialMeasurement r = run_trial(capped, model, *rank.comm, rank.device);
  EXPECT_EQ(r.status, TrialStatus::kOutOfMemory);
  EXPECT_FALSE(r.message.empty());
  EXPECT_LE(r.peak_memory_bytes, capped.memory_limit_bytes);
  TrialSpec bad = tiny_trial(model, StepTiming::kWhole);
  bad.config.grad_acc_steps += 1;
  EXPECT_THROW(run_trial(bad, model, *rank.comm, rank.device), InputError);
  EXPECT_THROW(join_trial("tpu"), InputError);
}

}  // namespace
}  // namespace gpudays
