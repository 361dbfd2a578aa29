// The results database as users share it: rows poisoned behind gpudays' back (a 1 us step stored
// with a 20 s step's figures, a 2^63-byte peak, an MFU edited up) are never used by best, results,
// export or cost, each named once; a reader meeting a writer that holds the lock past the busy
// timeout is told "locked", never "corrupted", and the file is byte for byte as it was.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/results_db.h"
#include "test_util.h"
#include "trainer/train_cli_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;
namespace fs = std::filesystem;

constexpr double kTrainSteps = 143000;  // pythia-1b's
constexpr double kStepS = 20.0;         // MFU 52% on 4 x A100

// pythia-1b trials whose stored figures are not what their step time makes: a 1 us step stored
// with the figures of a 20 s one (its MFU believed, it would be the best), a peak of 2^63 bytes,
// an MFU edited up. best, results, export and cost never use them; each is named once.
TEST(Workflow, PoisonedResultsRowsAreNeverUsed) {
  const std::string db = test::write_temp_file("poisoned-cli.db", "");
  fs::remove(db);
  {
    ResultsDb results = ResultsDb::open({db, /*read_only=*/false, &test::catalog()});
    for (int64_t micro : {1, 2, 4, 8}) results.insert(test::pythia_1b_trial(micro, kStepS, kStepS));
  }
  test::exec_sql(db,
                 "UPDATE trials SET step_time_median_s = 1e-6, step_time_min_s = 1e-6, "
                 "step_time_max_s = 1e-6 WHERE micro_batch_size = 2;"
                 "UPDATE trials SET peak_memory_bytes = 9223372036854775808.0 WHERE "
                 "micro_batch_size = 4;"
                 "UPDATE trials SET mfu = 0.6, hfu = 0.6 WHERE micro_batch_size = 8;");
  const auto expect_named = [&db](const std::string& what, const std::string& err) {
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 3) << what << ": " << err;
    for (const auto& [row, problem] :
         {std::pair<int, std::string>{2, "a step time of 1e-06 s means MFU"},
          {3, "a peak memory of 8589934592.0 GiB above the 80.0 GiB of a100-80gb-sxm"},
          {4, "stored MFU 60% where its step time of 20 s makes 52.5"}}) {
      const size_t at = err.find(fmt::format("gpudays: warning: {}: trial row {} (", db, row));
      ASSERT_NE(at, std::string::npos) << what << ": " << err;
      EXPECT_NE(err.substr(at, err.find('\n', at) - at).find(problem), std::string::npos)
          << what << ": " << err;
    }
  };
  const std::string cluster = " --model pythia-1b --gpu a100 --gpus-per-node 4 --db " + db;
  const auto best = run_gpudays("best" + cluster + " --format json");
  ASSERT_EQ(best.exit_code, 0) << best.err;
  expect_named("best", best.err);
  EXPECT_EQ(nlohmann::json::parse(best.out)["best"]["micro_batch_size"], 1) << best.out;
  const auto listed = run_gpudays("results --format json --db " + db);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  expect_named("results", listed.err);
  EXPECT_EQ(nlohmann::json::parse(listed.out)["rows"].size(), 1u) << listed.out;
  const auto exported = run_gpudays("export" + cluster + " --source bench --format toml");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  expect_named("export", exported.err);
  EXPECT_NE(exported.out.find("micro_batch_size = 1\n"), std::string::npos) << exported.out;
  const auto cost = run_gpudays(
      "cost --model pythia-1b --gpus a100 --counts 4 --source bench --format json --db " + db);
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  expect_named("cost", cost.err);
  EXPECT_NEAR(nlohmann::json::parse(cost.out)["rows"][0]["training_days"].get<double>(),
              kTrainSteps * kStepS / 86400.0,
              1e-6);
}

// A writer holding an exclusive lock: the reader waits GPUDAYS_DB_BUSY_TIMEOUT_S, then says the
// file is locked by another process (exit 2), and reads it once the lock goes; nothing changes.
TEST(Workflow, AReaderBesideALockedWriterIsToldLockedNotCorrupted) {
  const std::string db = test::fresh_path("shared.db");
  ResultsDb::open({db, /*read_only=*/false, &test::catalog()})
      .insert(test::pythia_1b_trial(1, kStepS, kStepS));
  const std::string before = test::read_file(db);
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (const std::string command :
       {"results", "best --model pythia-1b --gpu a100 --gpus-per-node 4"}) {
    const ChildResult locked =
        test::sh("GPUDAYS_DB_BUSY_TIMEOUT_S=1 " + std::string(GPUDAYS_BINARY) + " " + command +
                 " --db " + db);
    EXPECT_EQ(locked.exit_code, 2) << command << ": " << locked.err;
    EXPECT_NE(locked.err.find("is locked by another process"), std::string::npos) << locked.err;
    EXPECT_EQ(locked.err.find("corrupt"), std::string::npos) << locked.err;
  }
  sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  const auto read = run_gpudays("results --format jsonl --db " + db);
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(std::count(read.out.begin(), read.out.end(), '\n'), 1) << read.out;
  EXPECT_EQ(test::read_file(db), before);
}

}  // namespace
}  // namespace gpudays
