// The reference's rule and sweep files end to end on the CPU, with real trials of a small GPT-NeoX
// under a memory cap (the stub machine: CPU trials raise out-of-memory above it): `bench
// --strategy reference` keeps the largest micro-batch that fits, and a sweep killed mid-way and
// run again repeats no trial.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../process_dir.h"
#include "catalog/catalog.h"
#include "common/child_process.h"
#include "common/output_files.h"
#include "results/results_db.h"

namespace gpudays {
namespace {

const Catalog& catalog() {
  static const Catalog kCatalog = Catalog::load({});
  return kCatalog;
}

const std::string kModel = std::string(GPUDAYS_SOURCE_DIR) + "/tests/data/bench-gpt-neox.toml";
// Measured peaks of the model on one rank: micro-batch 2 about 23 MB, 4 about 35 MB.
constexpr const char* kCapBytes = "31457280";  // 30 MiB: micro-batches 1 and 2 fit

std::string temp_path(const std::string& name) {
  const std::string path = test::process_temp_dir().path() / name;
  std::filesystem::remove(path);
  return path;
}

ChildResult gpudays(const std::string& args) {
  return run_child({"/bin/sh", "-c", std::string(GPUDAYS_BINARY) + " " + args},
                   ChildOptions{600.0, ""});
}

std::vector<TrialRecord> stored(const std::string& db) {
  TrialFilter any;
  any.rule = std::nullopt;
  return ResultsDb::open({db, /*read_only=*/true, &catalog()}).query(any);
}

TEST(BenchCli, ReferenceStrategyKeepsTheLargestMicroBatchThatFits) {
  const std::string db = temp_path("reference.db");
  const ChildResult r = gpudays("bench --model-file " + kModel +
                                " --device cpu --methods naive --strategy reference"
                                " --memory-limit " +
                                kCapBytes + " --format json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["rule"], "reference");
  EXPECT_EQ(summary["best"]["micro_batch_size"], 2);
  const std::vector<TrialRecord> trials = stored(db);
  ASSERT_EQ(trials.size(), 3u);  // 1 and 2 fit, 4 runs out of memory: nothing larger is tried
  EXPECT_EQ(trials[2].measured.status, TrialStatus::kOutOfMemory);
  for (const TrialRecord& t : trials) {
    EXPECT_EQ(t.rule, MeasurementRule::kReference);
    EXPECT_EQ(t.measured.timing, StepTiming::kReference);
  }
  // step = accumulation x the micro-step + the optimizer, as stored.
  const TrialMeasurement& m = trials[1].measured;
  EXPECT_DOUBLE_EQ(m.step_time_median_s, 16 * m.last_micro_step_time_s + m.optimizer_time_s);
  const ChildResult best = gpudays("best --model-file " + kModel +
                                   " --gpu cpu --rule reference --format json --db " + db);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(nlohmann::json::parse(best.out)["best"]["micro_batch_size"], 2);
  // Its trials are not the gpudays rule's: `best` by default has none.
  EXPECT_EQ(gpudays("best --model-file " + kModel + " --gpu cpu --db " + db).exit_code, 2);
}

// A sweep none of whose cells is valid (free-lunch pinned on the plain preset) is a usage error:
// exit 2, after the summary that names each skip.
TEST(SweepCli, ASweepWithNoValidCellExits2) {
  const std::string file = temp_path("invalid.toml");
  write_file_atomically(file,
                        "model_files = [\"" + kModel +
                            "\"]\ngpus = [\"cpu\"]\nmethods = [\"naive\"]\n[pin]\n"
                            "free_lunch = true\n");
  const ChildResult r = gpudays("sweep " + file + " --device cpu --db " + temp_path("none.db"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("1 skipped as invalid"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("gpudays: error: no cell of " + file + " is valid"), std::string::npos)
      << r.err;
  // A --db that cannot be is the database's fault, said once, not each cell's.
  const std::string nowhere = temp_path("no-such-dir") + "/x.db";
  const ChildResult db = gpudays("sweep " + file + " --device cpu --db " + nowhere);
  EXPECT_EQ(db.exit_code, 2) << db.err;
  EXPECT_NE(db.err.find("--db " + nowhere + ": no directory"), std::string::npos) << db.err;
  EXPECT_EQ(db.out.find("skipped"), std::string::npos) << db.out;
}

// Two cells of 3 trials each; the sweep is killed (SIGKILL) once 2 trials are stored, then run
// again: it runs only what was missing, and a third run runs nothing.
TEST(SweepCli, AKilledSweepResumesAndRepeatsNoTrial) {
  const std::string db = temp_path("sweep.db");
  const std::string file = temp_path("tiny.toml");
  write_file_atomically(file,
                        "model_files = [\"" + kModel +
                            "\"]\ngpus = [\"cpu\"]\nmethods = [\"naive\", \"free-lunch\"]\n"
                            "strategy = \"reference\"\nmemory_limit = " +
                            kCapBytes + "\n");
  const std::string command =
      std::string(GPUDAYS_BINARY) + " sweep " + file + " --device cpu --db " + db;
  const pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", ("exec " + command + " > /dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  for (int i = 0; i < 3000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    try {  // the sweep may be creating the database right now
      if (std::filesystem::exists(db) && stored(db).size() >= 2) break;
    } catch (const InputError&) {
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const size_t before = stored(db).size();
  ASSERT_GE(before, 2u);
  ASSERT_LT(before, 6u) << "the sweep ended before it was killed";
  const ChildResult again = gpudays("sweep " + file + " --device cpu --db " + db);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(stored(db).size(), 6u);
  EXPECT_NE(again.out.find(fmt::format("; {} trials run, ", 6 - before)), std::string::npos)
      << again.out;
  EXPECT_EQ(again.out.find("kept as a repeat"), std::string::npos) << again.out;
  const ChildResult third = gpudays("sweep " + file + " --device cpu --db " + db);
  EXPECT_NE(third.out.find("0 cells benched (0 with no successful configuration), 2 already "
                           "complete, 0 skipped as invalid, 0 for other hardware; 0 trials run"),
            std::string::npos)
      << third.out;
  const ChildResult status = gpudays("sweep " + file + " --status --db " + db);
  EXPECT_NE(status.out.find("2 cells: 2 done, 0 to do, 0 invalid"), std::string::npos)
      << status.out;
}

}  // namespace
}  // namespace gpudays
