// Results database: round trip, no duplicates, persistence, and foreign or corrupted files
// rejected with a clear error and left byte-for-byte untouched.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include "common/error.h"

#include "catalog/model_loader.h"
#include "results/results_db.h"
#include "results/trial_columns.h"
#include "search_space/method_fields.h"
#include "test_util.h"

namespace gpudays {
namespace {

// pythia-14m on the host CPU: its global batch of 1024 in micro-batches of `micro_batch`.
TrialRecord sample_trial(int64_t micro_batch) {
  TrialRecord t;
  t.model = "pythia-14m";
  t.gpu = "cpu";
  t.measured.device_name = "test cpu";
  t.config.micro_batch_size = micro_batch;
  t.config.grad_acc_steps = 1024 / micro_batch;
  test::set_measured_step(t, 1.25);
  t.measured.step_time_min_s = 1.2;
  t.measured.step_time_max_s = 1.3;
  t.measured.peak_memory_bytes = 123456789;
  t.git_commit = "abc123";
  t.created_at = "2026-11-30T06:00:00Z";
  return t;
}

std::string open_error(const std::string& path, bool read_only = false) {
  try {
    ResultsDb::open({path, read_only, &test::catalog()});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ResultsDb, RoundTripAndNoDuplicates) {
  const std::string path = test::fresh_path("round.db");
  {
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    EXPECT_TRUE(db.insert(sample_trial(4)));
    EXPECT_FALSE(db.insert(sample_trial(4)));  // same identity
    EXPECT_TRUE(db.insert(sample_trial(8)));
  }
  ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
  const auto found = db.find(sample_trial(4).key());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->config.micro_batch_size, 4);
  EXPECT_EQ(found->measured.peak_memory_bytes, 123456789);
  EXPECT_DOUBLE_EQ(found->mfu, sample_trial(4).mfu);
  EXPECT_EQ(found->measured.status, TrialStatus::kOk);
  EXPECT_EQ(found->git_commit, "abc123");
  EXPECT_EQ(db.query({.model = "pythia-14m", .gpu = ""}).size(), 2u);
  EXPECT_TRUE(db.query({.model = "pythia-70m", .gpu = ""}).empty());
  EXPECT_FALSE(db.find(sample_trial(16).key()));
}

// A reference-rule trial is another key than the gpudays rule's of the same configuration (whose
// key is unchanged from before the rule existed); readers get the gpudays rule's unless they ask,
// and among reference trials only each method set's largest successful micro-batch is its pick.
TEST(ResultsDb, TheReferenceRuleIsStoredApartAndPicksTheLargestMicroBatch) {
  const std::string path = test::fresh_path("rules.db");
  TrialRecord gpudays_rule = sample_trial(4);
  EXPECT_EQ(gpudays_rule.key().find("rule"), std::string::npos);
  TrialRecord small = sample_trial(4);
  small.rule = MeasurementRule::kReference;
  TrialRecord large = sample_trial(8);
  large.rule = MeasurementRule::kReference;
  test::set_measured_step(large, 2.5);  // slower, yet the reference's pick
  TrialRecord oom = sample_trial(16);
  oom.rule = MeasurementRule::kReference;
  oom.measured.status = TrialStatus::kOutOfMemory;
  ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
  for (const TrialRecord& t : {gpudays_rule, small, large, oom}) EXPECT_TRUE(db.insert(t));
  EXPECT_NE(small.key(), gpudays_rule.key());
  EXPECT_EQ(db.query({.model = "pythia-14m"}).size(), 1u);
  const auto reference = db.query({.model = "pythia-14m", .rule = MeasurementRule::kReference});
  ASSERT_EQ(reference.size(), 3u);
  EXPECT_EQ(db.query({.model = "pythia-14m", .rule = std::nullopt}).size(), 4u);
  const TrialRecord* best = fastest_ok(reference);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->config.micro_batch_size, 8);
  EXPECT_EQ(reference_picks(reference).size(), 2u);  // micro-batch 8 and the out-of-memory 16
}

// Two runs measuring one configuration at once: the second measurement is kept as a repeat, never
// dropped silently and never used in place of the stored trial.
TEST(ResultsDb, ASecondMeasurementOfAKeyIsKeptAsARepeat) {
  const std::string path = test::fresh_path("repeats.db");
  ResultsDb first = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
  ResultsDb second = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
  ASSERT_TRUE(first.insert(sample_trial(4)));
  TrialRecord again = sample_trial(4);
  test::set_measured_step(again, 9.0);
  EXPECT_FALSE(second.insert(again));
  EXPECT_FALSE(first.insert(again));
  EXPECT_EQ(first.repeat_count(again.key()), 2);
  EXPECT_EQ(first.repeat_count(sample_trial(8).key()), 0);
  const auto stored = second.find(again.key());
  ASSERT_TRUE(stored);
  EXPECT_DOUBLE_EQ(stored->step_time_s(), sample_trial(4).step_time_s());
  EXPECT_EQ(first.query({}).size(), 1u);
}

// A file that cannot be written is refused when opened for writing, before any trial runs (an
// InputError: the user's choice of file, exit 2); read only, it opens. For an ordinary user, a
// file without write permission; for anyone, root included, a process that may not make any file
// grow (RLIMIT_FSIZE 0, SIGXFSZ ignored: the write fails with EFBIG), in a child process.
// `work`'s result, run in a child process whose files cannot grow (RLIMIT_FSIZE 0, SIGXFSZ
// ignored: a write that grows a file fails with EFBIG, as on a full disk), after `setup` ran there
// with no limit; -1 when the child did not exit.
int on_a_full_disk(
    const std::function<int()>& work, const std::function<void()>& setup = [] {}) {
  const pid_t child = fork();
  if (child == 0) {
    setup();
    signal(SIGXFSZ, SIG_IGN);
    const rlimit none{0, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &none);
    _exit(work());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// 0 when `run` throws an E whose message starts with `prefix` and is one line of at most
// `max_chars`; 1 for another message, 2 for another exception, 3 when it throws nothing.
template <typename E>
int error_kind(const std::function<void()>& run,
               const std::string& prefix,
               size_t max_chars = std::string::npos) {
  try {
    run();
  } catch (const E& e) {
    const std::string what = e.what();
    const bool one_line = what.find('\n') == std::string::npos && what.size() <= max_chars;
    return what.rfind(prefix, 0) == 0 && one_line ? 0 : 1;
  } catch (...) {
    return 2;
  }
  return 3;
}

TEST(ResultsDb, AReadOnlyFileIsRefusedWhenOpenedForWriting) {
  const std::string path = test::fresh_path("read-only.db");
  { ResultsDb::open({path, /*read_only=*/false, &test::catalog()}).insert(sample_trial(4)); }
  const auto write_refused = [&path] {
    try {
      ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    } catch (const InputError& e) {
      return std::string(e.what()).find("cannot write the results database " + path) !=
             std::string::npos;
    } catch (...) {
    }
    return false;
  };
  if (geteuid() != 0) {
    std::filesystem::permissions(path, std::filesystem::perms::owner_read);
    EXPECT_TRUE(write_refused());
    EXPECT_EQ(ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({}).size(), 1u);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  const std::string before = test::read_file(path);
  const int code = on_a_full_disk([&] {
    const bool refused = write_refused();
    const bool readable =
        ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({}).size() == 1;
    return refused && readable ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "refused and readable";
  EXPECT_EQ(test::read_file(path), before);
}

// A disk that fills during a run (RLIMIT_FSIZE 0 after the open, SIGXFSZ ignored: each write
// fails with EFBIG): storing a trial is an EnvironmentError naming the file (exit 1, one line),
// not an internal error, and the rows stored before are kept.
TEST(ResultsDb, ADiskThatFillsDuringARunIsAnEnvironmentError) {
  const std::string path = test::fresh_path("fills.db");
  { ResultsDb::open({path, /*read_only=*/false, &test::catalog()}).insert(sample_trial(4)); }
  std::optional<ResultsDb> db;  // opened before the disk fills
  const int code = on_a_full_disk(
      [&] {
        return error_kind<EnvironmentError>(
            [&] { db->insert(sample_trial(8)); },
            "cannot store the trial in the results database " + path + " (");
      },
      [&] {
        db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
      });
  EXPECT_EQ(code, 0) << "1: another message, 2: another error, 3: stored";
  EXPECT_EQ(ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({}).size(), 1u);
}

// A new database that cannot be made (a full disk: RLIMIT_FSIZE 0, SIGXFSZ ignored) is one line
// naming the file, without the schema's SQL, and leaves no file behind: a 0-byte file would later
// read as "not a gpudays results database yet".
TEST(ResultsDb, ANewDatabaseThatCannotBeMadeLeavesNoFile) {
  const std::string path = test::fresh_path("never-made.db");
  const int code = on_a_full_disk([&] {
    return error_kind<InputError>(
        [&] {
          ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
        },
        "cannot make the results database " + path + " (",
        /*max_chars=*/299);
  });
  EXPECT_EQ(code, 0) << "1: another message, 2: another error, 3: made";
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(ResultsDb, NotSqliteIsLeftUntouched) {
  const std::string path = test::write_temp_file("notes.db", "my thesis notes, do not lose\n");
  const std::string before = test::read_file(path);
  EXPECT_NE(open_error(path).find("not a gpudays results database"), std::string::npos);
  EXPECT_EQ(test::read_file(path), before);
}

TEST(ResultsDb, ForeignSqliteIsLeftUntouched) {
  const std::string path = test::fresh_path("foreign.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw,
               "CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (7);",
               nullptr,
               nullptr,
               nullptr);
  sqlite3_close(raw);
  const std::string before = test::read_file(path);
  EXPECT_NE(open_error(path).find("another application"), std::string::npos);
  EXPECT_EQ(test::read_file(path), before);
}

TEST(ResultsDb, CorruptedIsLeftUntouched) {
  const std::string path = test::fresh_path("corrupt.db");
  {
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    for (int64_t mb = 1; mb <= 64; mb *= 2) db.insert(sample_trial(mb));
  }
  std::string bytes = test::read_file(path);
  ASSERT_GT(bytes.size(), 4096u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);  // trash pages
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const std::string error = open_error(path);
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("left untouched"), std::string::npos) << error;
  EXPECT_EQ(test::read_file(path), bytes);
}

// Another process's lock past the busy timeout is "locked", never "corrupted" (a user told the
// file is corrupted deletes a healthy database); once the lock goes, the file opens as before.
TEST(ResultsDb, ABusyDatabaseIsCalledLockedNotCorrupted) {
  const std::string path = test::fresh_path("busy.db");
  { ResultsDb::open({path, /*read_only=*/false, &test::catalog()}).insert(sample_trial(4)); }
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  setenv("GPUDAYS_DB_BUSY_TIMEOUT_S", "1", 1);
  const std::string error = open_error(path, /*read_only=*/true);
  EXPECT_NE(error.find("is locked by another process"), std::string::npos) << error;
  EXPECT_NE(error.find("waited 1 s"), std::string::npos) << error;
  EXPECT_EQ(error.find("corrupt"), std::string::npos) << error;
  sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  unsetenv("GPUDAYS_DB_BUSY_TIMEOUT_S");
  EXPECT_EQ(ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({}).size(), 1u);
}

TEST(ResultsDb, Schema1IsReadAndUpgradedForWriting) {
  const std::string path = test::fresh_path("schema1.db");
  TrialRecord old = sample_trial(1);
  test::set_measured_step(old, 0.5);
  test::write_old_results_db(path, 1, {old});
  const std::string before = test::read_file(path);
  {
    const auto rows = ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].model, "pythia-14m");
    EXPECT_DOUBLE_EQ(rows[0].measured.step_time_median_s, 0.5);
    EXPECT_EQ(rows[0].measured.timing,
              StepTiming::kWhole);  // the default for rows before composed timing
    EXPECT_EQ(rows[0].measured.timing_check, "");
  }
  EXPECT_EQ(test::read_file(path), before);  // reading does not upgrade
  {
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    TrialRecord t = sample_trial(4);
    t.measured.timing = StepTiming::kParts;
    t.measured.micro_step_time_s = 0.1;
    t.measured.last_micro_step_time_s = 0.2;
    t.measured.optimizer_time_s = 0.05;
    t.measured.check_step_time_s = 1.6;
    t.measured.timing_check = "disagrees";
    test::set_measured_step(t, 1.6);  // a failed check keeps the whole steps as the step time
    EXPECT_TRUE(db.insert(t));
  }
  const auto rows = ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].measured.timing, StepTiming::kWhole);
  EXPECT_EQ(rows[1].measured.timing, StepTiming::kParts);
  EXPECT_DOUBLE_EQ(rows[1].measured.last_micro_step_time_s, 0.2);
  EXPECT_DOUBLE_EQ(rows[1].measured.check_step_time_s, 1.6);
  EXPECT_EQ(rows[1].measured.timing_check, "disagrees");
}

// The configuration and the cluster shape are stored field by field and read back equal, and the
// key of what was read is the key of what was written.
TEST(ResultsDb, ConfigurationAndShapeRoundTrip) {
  const std::string path = test::fresh_path("config-roundtrip.db");
  TrialRecord t = sample_trial(2);
  t.cluster = {2, 4};
  t.config.methods = {true, true, Sharding::kFsdpFullShard, true};
  t.measured.timing = StepTiming::kParts;
  t.measured.status = TrialStatus::kTimeout;
  {
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    EXPECT_TRUE(db.insert(t));
  }
  const auto rows = ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].config, t.config);
  EXPECT_EQ(rows[0].cluster, t.cluster);
  EXPECT_EQ(rows[0].measured.timing, StepTiming::kParts);
  EXPECT_EQ(rows[0].measured.status, TrialStatus::kTimeout);
  EXPECT_EQ(rows[0].key(), t.key());
}

// Every method set is its own row, stored under the field table's column names and read back
// equal; the key keeps its stored format and the schema its version.
TEST(ResultsDb, EveryMethodSetRoundTrips) {
  const std::string path = test::fresh_path("methods-roundtrip.db");
  const std::vector<MethodSet> sets = every_method_set();
  {
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    for (const MethodSet& m : sets) {
      TrialRecord t = sample_trial(2);
      t.config.methods = m;
      t.measured.status = TrialStatus::kCrash;  // offloading without sharding is no success
      EXPECT_TRUE(db.insert(t)) << describe(m);
    }
  }
  const auto rows = ResultsDb::open({path, /*read_only=*/true, &test::catalog()}).query({});
  ASSERT_EQ(rows.size(), sets.size());
  std::vector<MethodSet> back;
  for (const TrialRecord& r : rows) back.push_back(r.config.methods);
  for (const MethodSet& m : sets) {
    EXPECT_EQ(std::count(back.begin(), back.end(), m), 1) << describe(m);
  }
  std::vector<std::string> names;
  for (const TrialColumn& c : trial_columns()) names.push_back(c.name);
  for (const MethodField& f : method_fields()) {
    EXPECT_EQ(std::count(names.begin(), names.end(), std::string(f.name)), 1) << f.name;
  }
  TrialRecord t = sample_trial(2);
  t.config.methods = {true, false, Sharding::kZero2, true};
  EXPECT_EQ(t.key(),
            model_digest(test::catalog().model("pythia-14m")) +
                "|cpu|1x1|fl=1|ckpt=0|zero_2|offload=1|mb=2|acc=512|mem=0");
  EXPECT_EQ(trial_columns_schema_version(), 6);
}

// Rewrites one column of every stored row behind the database's back (a hostile or damaged row).
void overwrite_column(const std::string& path, const std::string& assignment) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string sql = "UPDATE trials SET " + assignment;
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

// Rows no trial can have measured are never used: a zero or negative step, an unordered spread,
// an MFU above 100%, an unknown sharding or status name. A new trial replaces such a row.
TEST(ResultsDb, InvalidRowsAreNeverUsedAndAreReplaced) {
  for (const char* assignment :
       {"step_time_median_s = -5.0, step_time_min_s = -5.0, step_time_max_s = -5.0",
        "step_time_median_s = 0.0, step_time_min_s = 0.0",
        "step_time_min_s = 9.0",
        "mfu = 2.09",
        "gpu = 'a100-80gb-sxm', hfu = 1.09",
        "timing = 'parts', micro_step_time_s = 10.0, last_micro_step_time_s = 1.0",
        "sharding = 'zero_9'",
        "status = 'great'",
        "micro_batch_size = 0",
        "training_days = -1.0",
        "peak_memory_bytes = -1"}) {
    const std::string path = test::fresh_path("invalid-row.db");
    {
      ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
      ASSERT_TRUE(db.insert(sample_trial(4)));
    }
    overwrite_column(path, assignment);
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    EXPECT_TRUE(db.query({}).empty()) << assignment;
    EXPECT_FALSE(db.find(sample_trial(4).key())) << assignment;
    EXPECT_TRUE(db.insert(sample_trial(4))) << assignment;
    ASSERT_EQ(db.query({}).size(), 1u) << assignment;
    EXPECT_DOUBLE_EQ(db.query({})[0].step_time_s(), 1.25) << assignment;
  }
}

// A row whose parts were timed at 3 x 9.5 + 9.5 + 1.0 = 39 s for a step stored as 7.49 s, at
// HFU 109% on a GPU. Neither can be a measurement; parts that compose within 25% (the slowest
// rank's figures are taken one by one), a failed check's whole steps, and the host CPU's counted
// utilisation up to 120% can.
TEST(TrialValidate, PartsThatDoNotComposeAndUtilisationAbove100AreInvalid) {
  TrialRecord t = sample_trial(16);
  t.config.grad_acc_steps = 4;  // row_problem does not ask for the global batch
  t.gpu = "a100-80gb-sxm";
  test::set_measured_step(t, 7.49);
  t.measured.timing = StepTiming::kParts;
  t.measured.micro_step_time_s = 9.5;
  t.measured.last_micro_step_time_s = 9.5;
  t.measured.optimizer_time_s = 1.0;
  EXPECT_NE(row_problem(t).find("parts composing to 39 s against a step time of 7.49 s"),
            std::string::npos)
      << row_problem(t);
  t.measured.micro_step_time_s = 1.8;
  t.measured.last_micro_step_time_s = 1.9;
  t.measured.optimizer_time_s = 0.2;  // 3 x 1.8 + 1.9 + 0.2 = 7.5 s
  EXPECT_EQ(row_problem(t), "");
  t.measured.optimizer_time_s = 2.0;  // 9.3 s: 24% over
  EXPECT_EQ(row_problem(t), "");
  t.measured.optimizer_time_s = 2.1;  // 9.4 s: 25.5% over
  EXPECT_NE(row_problem(t), "");
  t.measured.timing_check = "disagrees";  // the step time is the whole steps'
  t.measured.check_step_time_s = 7.49;
  EXPECT_EQ(row_problem(t), "");
  t.measured.check_step_time_s = 39.0;
  EXPECT_NE(row_problem(t).find("whole steps of 39 s against a step time of 7.49 s"),
            std::string::npos)
      << row_problem(t);
  t.measured.timing = StepTiming::kWhole;
  t.measured.timing_check = "";
  t.hfu = 1.41;  // past a measured ceiling of 1.2 of the peak with causal attention's margin
  EXPECT_NE(row_problem(t).find("HFU 141.0% not in [0, 140%]"), std::string::npos)
      << row_problem(t);
  t.hfu = 1.0;
  t.mfu = 1.0;
  EXPECT_EQ(row_problem(t), "");
  t.gpu = "cpu";
  t.hfu = 1.09;
  EXPECT_EQ(row_problem(t), "");
  t.hfu = 1.21;
  EXPECT_NE(row_problem(t).find("not in [0, 120%]"), std::string::npos) << row_problem(t);
}

TEST(ResultsDb, TruncatedIsCalledCorruptedNotForeign) {
  const std::string path = test::fresh_path("truncated.db");
  {
    ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
    for (int64_t mb = 1; mb <= 64; mb *= 2) db.insert(sample_trial(mb));
  }
  const std::string bytes = test::read_file(path).substr(0, 5000);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const std::string error = open_error(path);
  EXPECT_NE(error.find("corrupted or truncated"), std::string::npos) << error;
  EXPECT_EQ(error.find("another application"), std::string::npos) << error;
  EXPECT_EQ(test::read_file(path), bytes);
}

TEST(ResultsDb, NewerSchemaIsLeftUntouched) {
  const std::string path = test::fresh_path("newer.db");
  { ResultsDb::open({path, /*read_only=*/false, &test::catalog()}).insert(sample_trial(4)); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  const std::string before = test::read_file(path);
  EXPECT_NE(open_error(path).find("schema 99"), std::string::npos);
  EXPECT_EQ(test::read_file(path), before);
}

TEST(ResultsDb, ReadOnlyNeverCreates) {
  const std::string path = test::fresh_path("absent.db");
  try {
    ResultsDb::open({path, /*read_only=*/true, &test::catalog()});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no results database"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace gpudays
