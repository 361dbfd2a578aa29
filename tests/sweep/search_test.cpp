// The planner-guided search finds the exhaustive search's optimum with far fewer trials, on a
// simulated machine whose true step times and memory differ from the planner's predictions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sweep/search.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// A pseudo-random number in [0, 1) from a code (a fixed hash: the same on every run).
double unit_hash(double code) {
  return std::fmod(std::sin(code * 12.9898) * 43758.5453 + 1e6, 1.0);
}

// A machine the planner does not know exactly: each method set runs 0.88-1.12x the predicted
// time (a fixed pseudo-random factor per mechanism), each micro-batch of it a further
// 1 +- micro_noise (a fixed factor per method set and micro-batch: the planner's error does not
// keep the order of a set's micro-batches), memory is 0.9x the prediction plus 2% per
// micro-batch doubling, and out-of-memory happens above the capacity.
struct SimulatedMachine {
  const PlanResult* prediction;
  int64_t capacity_bytes;
  double micro_noise = 0.0;
  double seed = 0.0;

  // The FSDP names run the ZeRO stages' mechanisms in gpudays: one code (and one speed) per stage.
  static int code_of(const MethodSet& m) {
    return (m.free_lunch ? 1 : 0) + (m.activation_checkpointing ? 2 : 0) +
           4 * sharding_stage(m.sharding) + (m.offloading ? 32 : 0);
  }

  static double method_factor(const MethodSet& m) { return 0.88 + 0.24 * unit_hash(code_of(m)); }

  double micro_factor(const Configuration& c) const {
    const double code = 64.0 * code_of(c.methods) + std::log2(c.micro_batch_size) + 7919.0 * seed;
    return 1.0 + micro_noise * (2.0 * unit_hash(code + 0.5) - 1.0);
  }

  TrialOutcome operator()(const Configuration& r) const {
    for (const PlanRow& row : prediction->rows) {
      if (row.config != r) continue;
      const double memory = row.memory.least_bytes() * 0.9 *
                            (1.0 + 0.02 * std::log2(static_cast<double>(r.micro_batch_size)));
      if (memory > capacity_bytes) return {TrialStatus::kOutOfMemory, 0.0, 0, "simulated OOM"};
      return {TrialStatus::kOk,
              row.step_time_s * method_factor(r.methods) * micro_factor(r),
              static_cast<int64_t>(memory),
              ""};
    }
    ADD_FAILURE() << "trial outside the search space";
    return {TrialStatus::kCrash, 0.0, 0, "unknown configuration"};
  }
};

struct Case {
  const char* model;
  const char* gpu;
  int64_t gpus;
};

TEST(Search, GuidedFindsTheExhaustiveOptimumWithFiveTimesFewerTrials) {
  int exhaustive_total = 0, guided_total = 0;
  for (const Case& c : {Case{"pythia-160m", "rtx-3090", 1},
                        Case{"pythia-1b", "a100", 4},
                        Case{"pythia-1b", "rtx-3090", 8},
                        Case{"pythia-410m", "rtx-a6000", 2},
                        Case{"roberta", "h100", 8},
                        Case{"vit", "a100", 8},
                        Case{"convnext-large-1k", "rtx-3090", 4},
                        Case{"mamba", "h100", 8}}) {
    const Cluster cluster{{1, c.gpus}, &catalog().gpu(c.gpu)};
    const PlanResult prediction = plan(catalog().model(c.model), cluster, PlanOptions{});
    const SimulatedMachine machine{&prediction, cluster.gpu->memory_bytes};
    SearchOptions options;
    options.memory_capacity_bytes = cluster.gpu->memory_bytes;
    options.strategy = SearchStrategy::kExhaustive;
    const SearchResult exhaustive = run_search(prediction, machine, options);
    options.strategy = SearchStrategy::kGuided;
    const SearchResult guided = run_search(prediction, machine, options);
    ASSERT_TRUE(exhaustive.best) << c.model;
    ASSERT_TRUE(guided.best) << c.model;
    EXPECT_EQ(guided.best->outcome.step_time_s, exhaustive.best->outcome.step_time_s)
        << c.model << " on " << c.gpus << " x " << c.gpu;
    exhaustive_total += static_cast<int>(exhaustive.trials.size());
    guided_total += static_cast<int>(guided.trials.size());
    std::printf(
        "%-18s %d x %-9s exhaustive %3zu trials, guided %2zu (skipped %d, pruned %d of %d "
        "method sets)\n",
        c.model,
        static_cast<int>(c.gpus),
        c.gpu,
        exhaustive.trials.size(),
        guided.trials.size(),
        guided.method_sets_skipped,
        guided.method_sets_pruned,
        guided.method_sets_total);
  }
  std::printf("total: exhaustive %d trials, guided %d (%.1fx fewer)\n",
              exhaustive_total,
              guided_total,
              static_cast<double>(exhaustive_total) / guided_total);
  EXPECT_GE(exhaustive_total, 5 * guided_total);
}

// With the planner also off by +-micro_noise per (method set, micro-batch), the order of a set's
// micro-batches is no longer the planner's: the guided search's refinement must keep
// its pick within `within` of the exhaustive optimum, over 8 requests x 5 noise draws.
void expect_guided_near_exhaustive(double micro_noise, double within) {
  int exhaustive_total = 0, guided_total = 0, exact = 0, cases = 0;
  double worst = 0.0;
  std::string worst_case = "none";
  for (const Case& c : {Case{"pythia-160m", "rtx-3090", 1},
                        Case{"pythia-1b", "a100", 4},
                        Case{"pythia-1b", "rtx-3090", 8},
                        Case{"pythia-410m", "rtx-a6000", 2},
                        Case{"roberta", "h100", 8},
                        Case{"vit", "a100", 8},
                        Case{"convnext-large-1k", "rtx-3090", 4},
                        Case{"mamba", "h100", 8}}) {
    const Cluster cluster{{1, c.gpus}, &catalog().gpu(c.gpu)};
    const PlanResult prediction = plan(catalog().model(c.model), cluster, PlanOptions{});
    for (int seed = 0; seed < 5; ++seed) {
      const SimulatedMachine machine{
          &prediction, cluster.gpu->memory_bytes, micro_noise, static_cast<double>(seed)};
      SearchOptions options;
      options.memory_capacity_bytes = cluster.gpu->memory_bytes;
      options.strategy = SearchStrategy::kExhaustive;
      const SearchResult exhaustive = run_search(prediction, machine, options);
      options.strategy = SearchStrategy::kGuided;
      const SearchResult guided = run_search(prediction, machine, options);
      ASSERT_TRUE(exhaustive.best && guided.best) << c.model;
      const double gap =
          guided.best->outcome.step_time_s / exhaustive.best->outcome.step_time_s - 1.0;
      EXPECT_LE(gap, within) << c.model << " on " << c.gpus << " x " << c.gpu << ", seed " << seed
                             << ": exhaustive " << describe(exhaustive.best->request) << " "
                             << exhaustive.best->outcome.step_time_s << ", guided "
                             << describe(guided.best->request) << " "
                             << guided.best->outcome.step_time_s;
      if (gap > worst) {
        worst = gap;
        worst_case = std::string(c.model) + " on " + std::to_string(c.gpus) + " x " + c.gpu +
                     ": guided " + describe(guided.best->request) + ", exhaustive " +
                     describe(exhaustive.best->request);
      }
      exact += gap == 0.0;
      ++cases;
      exhaustive_total += static_cast<int>(exhaustive.trials.size());
      guided_total += static_cast<int>(guided.trials.size());
    }
  }
  std::printf(
      "noise +-%.0f%%: guided picked the exhaustive optimum in %d of %d cases, worst %.2f%% "
      "slower (%s); exhaustive %d trials, guided %d (%.1fx fewer)\n",
      100 * micro_noise,
      exact,
      cases,
      100 * worst,
      worst_case.c_str(),
      exhaustive_total,
      guided_total,
      static_cast<double>(exhaustive_total) / guided_total);
}

TEST(Search, GuidedStaysNearTheOptimumWhenThePlannerMisordersMicroBatches) {
  // Measured with refine_margin 0.10: +-5% -> the exact optimum in 40 of 40 cases; +-10% -> 37 of
  // 40, worst 5.2% slower (pythia-160m on one RTX 3090: a neighbour of a set 10-15% behind, which
  // refinement does not scan; 4.6% before the planner's measured GEMM ceilings of 2026-12-02).
  // Noise of +-10% can misorder two candidates by up to 20%: the bound is 6%.
  expect_guided_near_exhaustive(/*micro_noise=*/0.05, /*within=*/0.005);
  expect_guided_near_exhaustive(/*micro_noise=*/0.10, /*within=*/0.06);
}

// The planner's real error: against published measurements (the validation set,
// `gpudays validate`) its mean absolute percentage error is 12-25% by half and calibration, part
// of it a factor common to a GPU's configurations, which does not change the search's order.
// +-15% per (method set, micro-batch) on top of 0.88-1.12x per mechanism is of that size.
// Measured with refine_margin 0.10: the exact optimum in 33 of 40 cases, worst 7.4% slower, 8.1x
// fewer trials; the worst: pythia-160m on one RTX 3090, free-lunch + zero_2 + offload at
// micro-batch 8 where zero_1 + offload at 4 is faster. A wider margin, 0.20, gives 35 of 40 and
// the same worst case for 17% more trials.
TEST(Search, GuidedStaysNearTheOptimumWithThePlannersRealError) {
  expect_guided_near_exhaustive(/*micro_noise=*/0.15, /*within=*/0.08);
}

TEST(Search, CrashesAndTimeoutsAreRecordedAndTheSearchGoesOn) {
  const Cluster cluster{{1, 4}, &catalog().gpu("a100")};
  const PlanResult prediction = plan(catalog().model("pythia-160m"), cluster, PlanOptions{});
  const SimulatedMachine machine{&prediction, cluster.gpu->memory_bytes};
  auto flaky = [&](const Configuration& r) -> TrialOutcome {
    if (r.methods.sharding == Sharding::kZero2) return {TrialStatus::kCrash, 0, 0, "segfault"};
    if (r.methods.sharding == Sharding::kZero3) return {TrialStatus::kTimeout, 0, 0, "hung"};
    return machine(r);
  };
  SearchOptions options;
  options.memory_capacity_bytes = cluster.gpu->memory_bytes;
  options.strategy = SearchStrategy::kExhaustive;
  const SearchResult r = run_search(prediction, flaky, options);
  int crashes = 0, timeouts = 0;
  for (const SearchTrial& t : r.trials) {
    crashes += t.outcome.status == TrialStatus::kCrash;
    timeouts += t.outcome.status == TrialStatus::kTimeout;
  }
  EXPECT_GT(crashes, 0);
  EXPECT_GT(timeouts, 0);
  ASSERT_TRUE(r.best);
  EXPECT_NE(r.best->request.methods.sharding, Sharding::kZero2);
  EXPECT_NE(r.best->request.methods.sharding, Sharding::kZero3);
}

TEST(Search, OutOfMemoryHalvesUntilItFits) {
  const Cluster cluster{{1, 1}, &catalog().gpu("rtx-3090")};
  PlanOptions po;
  po.preset = MethodPreset::kFreeLunch;
  const PlanResult prediction = plan(catalog().model("pythia-410m"), cluster, po);
  // The true machine has half the memory the planner thinks: the first probe runs out of memory.
  const SimulatedMachine machine{&prediction, cluster.gpu->memory_bytes / 2};
  SearchOptions options;
  options.memory_capacity_bytes = cluster.gpu->memory_bytes;
  const SearchResult r = run_search(prediction, machine, options);
  ASSERT_GE(r.trials.size(), 2u);
  EXPECT_EQ(r.trials.front().outcome.status, TrialStatus::kOutOfMemory);
  ASSERT_TRUE(r.best);
  EXPECT_LT(r.best->request.micro_batch_size, r.trials.front().request.micro_batch_size);
}

// The progress bound: trials are numbered 1, 2, ...; the bound never undercounts the trials the
// search goes on to run, and never grows (each trial narrows the plan).
TEST(Search, ProgressBoundIsAnUpperBoundThatNeverGrows) {
  for (const SearchStrategy strategy : {SearchStrategy::kExhaustive, SearchStrategy::kGuided}) {
    const Cluster cluster{{1, 8}, &catalog().gpu("rtx-3090")};
    const PlanResult prediction = plan(catalog().model("pythia-1b"), cluster, PlanOptions{});
    const SimulatedMachine machine{&prediction, cluster.gpu->memory_bytes};
    SearchOptions options;
    options.memory_capacity_bytes = cluster.gpu->memory_bytes;
    options.strategy = strategy;
    std::vector<std::pair<int, int>> calls;
    options.on_trial = [&](int trial, int bound) { calls.emplace_back(trial, bound); };
    const SearchResult r = run_search(prediction, machine, options);
    ASSERT_EQ(calls.size(), r.trials.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].first, static_cast<int>(i + 1));
      EXPECT_GE(calls[i].second, static_cast<int>(r.trials.size()));
      if (i > 0) {
        EXPECT_LE(calls[i].second, calls[i - 1].second);
      }
    }
  }
}

}  // namespace
}  // namespace gpudays

namespace gpudays {
namespace {

// The reference's rule on a machine whose smaller micro-batches are faster: every method set's
// micro-batch doubles from 1 until out of memory, and its result is the largest that fit, never
// the faster smaller one; the best is the fastest of those picks.
TEST(Search, ReferencePicksTheLargestFittingMicroBatchNotTheFastest) {
  const Cluster cluster{{1, 4}, &catalog().gpu("a100")};
  PlanOptions plan_options;
  plan_options.preset = MethodPreset::kFreeLunch;
  const PlanResult prediction = plan(catalog().model("pythia-1b"), cluster, plan_options);
  constexpr int64_t kFits = 8;  // micro-batches above it run out of memory
  std::vector<int64_t> tried;
  auto machine = [&](const Configuration& r) {
    tried.push_back(r.micro_batch_size);
    if (r.micro_batch_size > kFits) return TrialOutcome{TrialStatus::kOutOfMemory, 0.0, 0, "oom"};
    return TrialOutcome{
        TrialStatus::kOk, 1.0 + 0.1 * static_cast<double>(r.micro_batch_size), 1, ""};
  };
  SearchOptions options;
  options.strategy = SearchStrategy::kReference;
  options.memory_capacity_bytes = cluster.gpu->memory_bytes;
  const SearchResult result = run_search(prediction, machine, options);
  EXPECT_EQ(tried, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  ASSERT_TRUE(result.best);
  EXPECT_EQ(result.best->request.micro_batch_size, kFits);
  EXPECT_DOUBLE_EQ(result.best->outcome.step_time_s, 1.8);  // micro-batch 1 measured 1.1
  EXPECT_EQ(measurement_rule(options.strategy), MeasurementRule::kReference);
  EXPECT_EQ(parse_search_strategy("reference"), SearchStrategy::kReference);
}

}  // namespace
}  // namespace gpudays
