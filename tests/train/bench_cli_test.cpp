// The benchmark end to end on the CPU with a memory cap: real trials of a small GPT-NeoX through
// `gpudays bench` and `gpudays trial`; the largest micro-batch found is the largest under the cap,
// the out-of-memory trial is recorded as such, and the optimal row (bench's and `best`'s) is the
// fastest measured trial.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "bench/child_process.h"
#include "results/results_db.h"

namespace gpudays {
namespace {

ChildResult gpudays(const std::string& args) {
  return run_child({"/bin/sh", "-c", std::string(GPUDAYS_BINARY) + " " + args},
                   ChildOptions{600.0, ""});
}

TEST(BenchCli, MemoryCapBoundsTheMicroBatchAndEveryTrialIsRecorded) {
  const std::string db = std::filesystem::temp_directory_path() / "gpudays_bench_cli.db";
  std::filesystem::remove(db);
  const std::string model = std::string(GPUDAYS_SOURCE_DIR) + "/tests/data/bench-gpt-neox.toml";
  // Measured peaks of this model: micro-batch 8 about 60 MB, 16 about 105 MB.
  const ChildResult r = gpudays("bench --model-file " + model + " --device cpu --methods free-lunch"
                                " --strategy exhaustive --memory-limit 83886080 --format json"
                                " --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const auto trials = ResultsDb::open({db, /*read_only=*/true}).query({});
  ASSERT_EQ(trials.size(), 5u);  // micro-batches 1, 2, 4, 8 fit; 16 runs out of memory
  EXPECT_EQ(trials.back().micro_batch_size, 16);
  EXPECT_EQ(trials.back().status, TrialStatus::kOutOfMemory);
  // The largest micro-batch that ran is the largest under the cap; the optimal row is the fastest
  // measured one (which micro-batch that is depends on this machine's timings).
  EXPECT_EQ(trials[trials.size() - 2].micro_batch_size, 8);
  const TrialRecord* fastest = &trials.front();
  for (size_t i = 0; i + 1 < trials.size(); ++i) {
    if (trials[i].step_time_median_s < fastest->step_time_median_s) fastest = &trials[i];
    EXPECT_EQ(trials[i].status, TrialStatus::kOk);
    EXPECT_LE(trials[i].peak_memory_bytes, 83886080);
    EXPECT_GE(trials[i].steps_timed, 3);
    EXPECT_LE(trials[i].step_time_min_s, trials[i].step_time_median_s);
    EXPECT_FALSE(trials[i].torch_version.empty());
  }
  const ChildResult best = gpudays("best --model bench-gpt-neox --gpu cpu --format json --db " + db);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(summary["best"]["micro_batch_size"], fastest->micro_batch_size);
  EXPECT_EQ(nlohmann::json::parse(best.out)["micro_batch_size"], fastest->micro_batch_size);
}

}  // namespace
}  // namespace gpudays
