// Sweeps through child processes: every trial recorded with provenance, reruns reuse them, crashes
// and hangs cost one trial, and a sweep killed with SIGKILL resumes without losing or duplicating.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/output_files.h"
#include "process_dir.h"
#include "sweep/sweep.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;
constexpr int64_t kGiB = 1024LL * 1024 * 1024;

// Two ranks on a host CPU with made-up figures: fast enough that the fake trial's times stay
// physically possible, and an fp16 peak (a probe measures none) for pythia-70m's recipe.
GpuSpec fake_host_cpu(double tflops = 500.0) {
  GpuSpec cpu = host_cpu_spec({"fake cpu", 2, tflops, tflops, 20.0, 48 * kGiB}, {.ranks = 2});
  cpu.peak_fp16_tflops = cpu.peak_bf16_tflops;
  return cpu;
}

struct SweepFixture {
  std::string db_path;
  GpuSpec cpu = fake_host_cpu();
  Cluster cluster{{1, 2}, &cpu};
  SweepOptions options;
  PlanOptions plan_options;

  explicit SweepFixture(const std::string& name) {
    db_path = test::write_temp_file(name, "");
    std::filesystem::remove(db_path);
    options.trial_command = {FAKE_TRIAL_BINARY};
    // Trial specs and outputs in this process's directory: a killed sweep leaves them behind.
    options.work_dir = test::process_temp_dir().path().string();
    options.memory_limit_bytes = 8 * kGiB;
    options.trial_timeout_s = 2.0;
    options.strategy = SearchStrategy::kExhaustive;
  }

  SweepSummary run(std::ostream& progress, const ModelSpec& model = catalog().model("pythia-70m")) {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    return run_sweep(model, cluster, plan_options, options, db, progress);
  }
};

TEST(Sweep, RecordsEveryTrialAndReusesThemOnRerun) {
  SweepFixture f("sweep_rerun.db");
  f.plan_options.preset = MethodPreset::kFreeLunch;
  std::ostringstream progress;
  const SweepSummary first = f.run(progress);
  EXPECT_GT(first.trials_run, 3);
  EXPECT_EQ(first.trials_reused, 0);
  ASSERT_TRUE(first.search.best);
  EXPECT_EQ(first.search.best->request.micro_batch_size, 8);  // the largest under 8 GiB
  EXPECT_NE(progress.str().find("[trial 1 of ≤"), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("ETA unknown"), std::string::npos);  // before any trial ended
  EXPECT_NE(progress.str().find("ETA ≤ "), std::string::npos);
  const auto rows = ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({});
  EXPECT_EQ(static_cast<int>(rows.size()), first.trials_run);
  EXPECT_EQ(rows.front().measured.device_name, "fake device");
  EXPECT_FALSE(rows.front().created_at.empty());
  EXPECT_FALSE(rows.front().git_commit.empty());

  std::ostringstream again;
  const SweepSummary second = f.run(again);
  EXPECT_EQ(second.trials_run, 0);
  EXPECT_EQ(second.trials_reused, first.trials_run);
  EXPECT_EQ(ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({}).size(),
            rows.size());
}

// A model named "pythia-70m" that is not the catalog's (another depth) is measured, not served the
// catalog model's stored trials; both models' trials are kept, each under its own digest, and
// read back re-derived from the model each was measured with.
TEST(Sweep, AModelOfTheSameNameButAnotherArchitectureIsMeasuredAgain) {
  SweepFixture f("sweep_same_name.db");
  f.plan_options.preset = MethodPreset::kFreeLunch;
  std::ostringstream progress;
  const SweepSummary first = f.run(progress);
  ModelSpec other = catalog().model("pythia-70m");
  other.arch.n_layers = 4;
  const SweepSummary second = f.run(progress, other);
  EXPECT_EQ(second.trials_reused, 0);
  EXPECT_EQ(second.trials_run, first.trials_run);
  const auto rows = ResultsDb::open({f.db_path, /*read_only=*/true, &test::catalog()}).query({});
  ASSERT_EQ(static_cast<int>(rows.size()), first.trials_run + second.trials_run);
  std::set<std::string> digests;
  for (const TrialRecord& t : rows) {
    EXPECT_EQ(t.model, "pythia-70m");
    digests.insert(t.model_digest);
  }
  EXPECT_EQ(
      digests,
      (std::set<std::string>{model_digest(catalog().model("pythia-70m")), model_digest(other)}));
  EXPECT_EQ(f.run(progress, other).trials_reused, second.trials_run);
}

// On a CPU whose measured matmuls are slower than the fake trial's times imply, every trial is a
// timing bug; on one whose peaks are not known (the stand-in), nothing is checked and no MFU kept.
TEST(Sweep, AMeasuredCpuCeilingRejectsImpossibleTimes) {
  for (bool measured : {true, false}) {
    SweepFixture f(measured ? "sweep_cpu_measured.db" : "sweep_cpu_stand_in.db");
    f.cpu = fake_host_cpu(/*tflops=*/0.5);
    f.cpu.matmul_ceiling_measured = measured;
    f.plan_options.preset = MethodPreset::kFreeLunch;
    std::ostringstream progress;
    const SweepSummary s = f.run(progress);
    const bool rejected =
        progress.str().find("REJECTED (timing bug): MFU") != std::string::npos &&
        progress.str().find("exceeds the cpu matmul ceiling 100.0%") != std::string::npos;
    EXPECT_EQ(rejected, measured) << progress.str();
    EXPECT_EQ(s.search.best.has_value(), !measured);
    if (measured) continue;
    for (const TrialRecord& t :
         ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({}))
      EXPECT_EQ(t.mfu, 0.0);
  }
}

TEST(Sweep, CrashesAndHangsCostOneTrialEach) {
  SweepFixture f("sweep_faults.db");
  f.options.trial_timeout_s = 1.5;  // generous: a loaded CI machine is slow to start processes
  setenv("FAKE_CRASH_SHARDING", "zero_2", 1);
  setenv("FAKE_HANG_SHARDING", "zero_3", 1);
  f.plan_options.preset = MethodPreset::kAll;
  std::ostringstream progress;
  const SweepSummary s = f.run(progress);
  unsetenv("FAKE_CRASH_SHARDING");
  unsetenv("FAKE_HANG_SHARDING");
  int crashes = 0, timeouts = 0, ok = 0;
  for (const TrialRecord& t :
       ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({})) {
    crashes += t.measured.status == TrialStatus::kCrash;
    timeouts += t.measured.status == TrialStatus::kTimeout;
    ok += t.measured.status == TrialStatus::kOk;
  }
  // zero_2 x {free-lunch, checkpointing, offloading off and on}: the first micro-batch of each.
  EXPECT_EQ(crashes, 8);
  EXPECT_EQ(timeouts, 8);  // zero_3 likewise
  EXPECT_GT(ok, 10);
  ASSERT_TRUE(s.search.best);
  EXPECT_NE(progress.str().find("crash: "), std::string::npos);
}

// A trial that dies of an uncaught c10::Error: the stored message is the error's line, not a frame
// of its backtrace, and the whole stderr is kept where the options say.
TEST(Sweep, ACrashStoresItsErrorLineAndKeepsItsStderr) {
  SweepFixture f("sweep_c10_crash.db");
  f.options.stderr_dir = test::process_temp_dir().path().string() + "/trial-stderr";
  setenv("FAKE_C10_CRASH_SHARDING", "none", 1);
  f.plan_options.preset = MethodPreset::kNaive;
  std::ostringstream progress;
  f.run(progress);
  unsetenv("FAKE_C10_CRASH_SHARDING");
  int crashes = 0;
  for (const TrialRecord& t :
       ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({})) {
    if (t.measured.status != TrialStatus::kCrash) continue;
    ++crashes;
    EXPECT_EQ(t.measured.message,
              "killed by signal 6: what():  CUDA error: an illegal memory access was encountered");
  }
  EXPECT_GT(crashes, 0);
  int kept = 0;
  for (const auto& entry : std::filesystem::directory_iterator(f.options.stderr_dir)) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.rfind("# pythia-70m ", 0), 0u) << text;
    EXPECT_NE(text.find("frame #1:"), std::string::npos);  // the whole stderr
    ++kept;
  }
  EXPECT_EQ(kept, crashes);
  // A second sweep into the folder adds its own files and replaces none.
  f.options.memory_limit_bytes = 4 * kGiB;  // other trials: the first sweep's are reused
  setenv("FAKE_C10_CRASH_SHARDING", "none", 1);
  f.run(progress);
  unsetenv("FAKE_C10_CRASH_SHARDING");
  int after = 0;
  for (const auto& entry : std::filesystem::directory_iterator(f.options.stderr_dir)) {
    (void)entry;
    ++after;
  }
  EXPECT_GT(after, kept);
}

TEST(ChildProcess, ErrorLineSkipsBacktraces) {
  EXPECT_EQ(error_line("loading\ngpudays: internal error: CUDA error: out of bounds\n"),
            "gpudays: internal error: CUDA error: out of bounds");
  EXPECT_EQ(error_line("x\nException raised from f at a.cpp:1 (most recent call first):\n"
                       "frame #0: c10::Error::Error() + 0x98\nframe #1: g + 0x1\n"),
            "x");
  EXPECT_EQ(error_line("[rank0]: NCCL error in: ProcessGroupNCCL.cpp:1\nframe #0: h\n"),
            "[rank0]: NCCL error in: ProcessGroupNCCL.cpp:1");
  EXPECT_EQ(error_line(" \n"), "");
}

TEST(Errors, OneLineDropsWhatFollowsTheFirstLine) {
  const std::runtime_error e(
      "CUDA out of memory. Tried to allocate 2.00 GiB\nException raised from malloc at "
      "CUDACachingAllocator.cpp:1 (most recent call first):\nframe #0: c10::Error::Error()");
  EXPECT_EQ(one_line(e), "CUDA out of memory. Tried to allocate 2.00 GiB");
}

// A trial killed by a signal from outside (SIGKILL here, as the OOM killer or a pre-emption) is
// recorded as "killed" and measured again on the next run; a trial that crashed by itself
// (SIGABRT) stays recorded and is reused. With retry_killed off, killed trials are reused too.
TEST(Sweep, KilledTrialsAreMeasuredAgainCrashesAreNot) {
  SweepFixture f("sweep_killed.db");
  f.options.trial_timeout_s = 5.0;
  f.plan_options.preset = MethodPreset::kAll;
  setenv("FAKE_KILL_SHARDING", "zero_1", 1);
  setenv("FAKE_CRASH_SHARDING", "zero_2", 1);
  std::ostringstream progress;
  f.run(progress);
  unsetenv("FAKE_KILL_SHARDING");
  unsetenv("FAKE_CRASH_SHARDING");
  const auto count = [&](TrialStatus status, Sharding sharding) {
    int n = 0;
    for (const TrialRecord& t :
         ResultsDb::open({f.db_path, /*read_only=*/true, &test::catalog()}).query({})) {
      n += t.measured.status == status && t.config.methods.sharding == sharding;
    }
    return n;
  };
  const int killed = count(TrialStatus::kKilled, Sharding::kZero1);
  EXPECT_GT(killed, 0);
  EXPECT_GT(count(TrialStatus::kCrash, Sharding::kZero2), 0);
  f.options.retry_killed = false;
  const SweepSummary reused = f.run(progress);
  EXPECT_EQ(reused.trials_run, 0);
  EXPECT_EQ(count(TrialStatus::kKilled, Sharding::kZero1), killed);
  f.options.retry_killed = true;
  const SweepSummary again = f.run(progress);
  EXPECT_GE(again.trials_run, killed);
  EXPECT_EQ(again.trials_not_stored, 0);
  EXPECT_EQ(count(TrialStatus::kKilled, Sharding::kZero1), 0);
  EXPECT_GT(count(TrialStatus::kOk, Sharding::kZero1), 0);
  EXPECT_GT(count(TrialStatus::kCrash, Sharding::kZero2), 0);
}

// The fake trial is deterministic: a sweep killed with SIGKILL and resumed must end with exactly
// the rows and the best configuration of a sweep that was never interrupted, and the resumed run
// must not try to store a trial the killed one had stored (counted before the insert, not by the
// table's unique key).
TEST(Sweep, KilledSweepResumesWithoutLossOrDuplicates) {
  SweepFixture reference("sweep_uninterrupted.db");
  reference.plan_options.preset = MethodPreset::kAll;
  std::ostringstream reference_progress;
  const SweepSummary uninterrupted = reference.run(reference_progress);
  EXPECT_EQ(uninterrupted.trials_not_stored, 0);
  SweepFixture f("sweep_kill.db");
  f.plan_options.preset = MethodPreset::kAll;
  setenv("FAKE_SLEEP_S", "0.005", 1);
  const pid_t child = fork();
  if (child == 0) {
    std::ostringstream sink;
    f.run(sink);
    _exit(0);
  }
  // Kill it once a few trials are in the database.
  for (int i = 0; i < 500; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    try {  // the child may be creating the database right now
      if (std::filesystem::exists(f.db_path) &&
          ResultsDb::open({f.db_path, /*read_only=*/true, &test::catalog()}).query({}).size() >=
              5) {
        break;
      }
    } catch (const InputError&) {
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const size_t before =
      ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({}).size();
  ASSERT_GE(before, 5u);
  std::ostringstream progress;
  const SweepSummary resumed = f.run(progress);
  unsetenv("FAKE_SLEEP_S");
  EXPECT_GE(resumed.trials_reused, static_cast<int>(before));
  EXPECT_EQ(resumed.trials_not_stored, 0) << "the resumed sweep re-ran a stored trial";
  const auto rows = ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({});
  EXPECT_EQ(static_cast<int>(rows.size()), resumed.trials_run + resumed.trials_reused);
  // Same rows as the uninterrupted sweep: every key, its status and its step time.
  std::map<std::string, std::pair<TrialStatus, double>> expected, got;
  for (const TrialRecord& t :
       ResultsDb::open({reference.db_path, /*read_only=*/false, &test::catalog()}).query({})) {
    expected[t.key()] = {t.measured.status, t.step_time_s()};
  }
  for (const TrialRecord& t : rows) got[t.key()] = {t.measured.status, t.step_time_s()};
  EXPECT_EQ(got, expected);
  ASSERT_TRUE(uninterrupted.search.best && resumed.search.best);
  EXPECT_EQ(resumed.search.best->request, uninterrupted.search.best->request);
  EXPECT_EQ(resumed.search.best->outcome.step_time_s,
            uninterrupted.search.best->outcome.step_time_s);
}

// Parts timing: the first trial of each method set checks its composition against whole steps;
// the others do not. A failed check is stored, shouted in the progress, and the method set's later
// trials are timed in whole steps.
// Ctrl-C (SIGINT) or SIGTERM to a sweep stops the running trial's whole process group, removes
// its temporary spec file, records nothing of it and ends the sweep with Interrupted.
TEST(Sweep, SignalStopsTheRunningTrialAndRecordsNothing) {
  for (const int signal : {SIGINT, SIGTERM}) {
    SweepFixture f("sweep_signal.db");
    const std::string dir =
        (std::filesystem::path(test::write_temp_file("signal.marker", "")).parent_path() /
         "sweep-signal-work")
            .string();
    std::filesystem::create_directories(dir);
    f.options.work_dir = dir;
    f.options.trial_timeout_s = 60.0;
    const std::string pid_file = dir + "/trial.pid";
    std::filesystem::remove(pid_file);
    setenv("FAKE_HANG_SHARDING", "none", 1);
    setenv("FAKE_PID_FILE", pid_file.c_str(), 1);
    const pid_t sweeper = fork();
    if (sweeper == 0) {
      std::ostringstream sink;
      try {
        f.run(sink);
      } catch (const Interrupted& e) {
        _exit(128 + e.signal());
      }
      _exit(0);
    }
    unsetenv("FAKE_HANG_SHARDING");
    unsetenv("FAKE_PID_FILE");
    for (int i = 0; i < 500 && !std::filesystem::exists(pid_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the pid is written
    pid_t trial = 0;
    std::ifstream(pid_file) >> trial;
    ASSERT_GT(trial, 0);
    kill(sweeper, signal);
    int status = 0;
    waitpid(sweeper, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
    EXPECT_NE(kill(trial, 0), 0) << "the trial outlived the sweep";
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      EXPECT_EQ(entry.path().extension(), ".pid") << entry.path() << " left behind";
    }
    EXPECT_TRUE(
        ResultsDb::open({f.db_path, /*read_only=*/true, &test::catalog()}).query({}).empty());
  }
}

// A sweep killed with SIGKILL cannot clean up: its trial dies with it (PR_SET_PDEATHSIG) instead
// of holding the device until its time limit.
TEST(Sweep, TrialDiesWithAKilledSweep) {
  SweepFixture f("sweep_sigkill.db");
  f.options.trial_timeout_s = 60.0;
  const std::string pid_file = test::write_temp_file("sigkill-trial.pid", "");
  std::filesystem::remove(pid_file);
  setenv("FAKE_HANG_SHARDING", "none", 1);
  setenv("FAKE_PID_FILE", pid_file.c_str(), 1);
  const pid_t sweeper = fork();
  if (sweeper == 0) {
    std::ostringstream sink;
    f.run(sink);
    _exit(0);
  }
  unsetenv("FAKE_HANG_SHARDING");
  unsetenv("FAKE_PID_FILE");
  for (int i = 0; i < 500 && !std::filesystem::exists(pid_file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pid_t trial = 0;
  std::ifstream(pid_file) >> trial;
  ASSERT_GT(trial, 0);
  kill(sweeper, SIGKILL);
  waitpid(sweeper, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(trial, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "trial " << trial << " outlived the killed sweep";
  if (!gone) kill(trial, SIGKILL);
}

// Trial specs and outputs go to the sweep's own directory (<work>/gpudays-sweep-<pid>-XXXXXX),
// removed when the sweep ends; one that a SIGKILLed sweep left behind (its process gone) is
// removed by the next sweep, and a live sweep's directory is left alone.
TEST(Sweep, TrialFilesLiveInAPerSweepDirectoryRemovedAtTheEnd) {
  SweepFixture f("sweep_dir.db");
  f.plan_options.preset = MethodPreset::kFreeLunch;
  const std::string work = test::process_temp_dir().fresh_dir("sweep-dir-work");
  f.options.work_dir = work;
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = fmt::format("{}/gpudays-sweep-{}-abcdef", work, dead);
  const std::string live = fmt::format("{}/gpudays-sweep-{}-ghijkl", work, getppid());
  for (const std::string& dir : {stale, live}) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/trial.0.json") << "{}";
  }
  // The trial command logs the directory of the spec it is given ("--spec FILE" follows).
  const std::string log = work + "/spec-dirs.log";
  f.options.trial_command = {
      "/bin/sh",
      "-c",
      fmt::format("dirname \"$2\" >> {}; exec {} \"$@\"", log, FAKE_TRIAL_BINARY),
      "sh"};
  std::ostringstream progress;
  const SweepSummary s = f.run(progress);
  ASSERT_GT(s.trials_run, 1) << progress.str();
  std::ifstream in(log);
  std::set<std::string> dirs;
  for (std::string line; std::getline(in, line);) dirs.insert(line);
  ASSERT_EQ(dirs.size(), 1u);
  const std::string used = *dirs.begin();
  EXPECT_EQ(used.rfind(fmt::format("{}/gpudays-sweep-{}-", work, getpid()), 0), 0u) << used;
  EXPECT_FALSE(std::filesystem::exists(used)) << used << " left behind";
  EXPECT_FALSE(std::filesystem::exists(stale)) << "a dead sweep's directory was kept";
  EXPECT_TRUE(std::filesystem::exists(live + "/trial.0.json")) << "a live sweep's was removed";
}

// A work directory (TMPDIR, by default) where the trial files cannot be written fails the sweep
// with one line before any trial runs; no trial is stored (as rejected or crashed).
TEST(Sweep, AnUnwritableTrialDirectoryFailsTheSweepAndStoresNothing) {
  const std::string file = test::write_temp_file("not-a-directory", "x");
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_tmpdir = saved != nullptr ? saved : "";
  for (const std::string& work : {std::string("/nonexistent-gpudays/work"), file, std::string()}) {
    SweepFixture f("sweep_unwritable.db");
    f.options.work_dir = work;
    if (work.empty()) setenv("TMPDIR", "/nonexistent-gpudays/tmp", 1);
    std::ostringstream progress;
    try {
      f.run(progress);
      ADD_FAILURE() << "the sweep ran with trial files in '" << work << "'";
    } catch (const IoError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cannot make the sweep's directory for trial files in"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find(work.empty() ? "/nonexistent-gpudays/tmp (TMPDIR)" : work),
                std::string::npos)
          << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    if (work.empty()) {
      if (saved != nullptr) setenv("TMPDIR", saved_tmpdir.c_str(), 1);
      if (saved == nullptr) unsetenv("TMPDIR");
    }
    EXPECT_TRUE(
        ResultsDb::open({f.db_path, /*read_only=*/true, &test::catalog()}).query({}).empty())
        << work;
  }
}

TEST(Sweep, FirstTrialOfEachMethodSetChecksThePartsComposition) {
  for (const bool disagree : {false, true}) {
    SweepFixture f(disagree ? "sweep_check_bad.db" : "sweep_check.db");
    f.plan_options.preset = MethodPreset::kFreeLunch;
    if (disagree) setenv("FAKE_DISAGREE", "1", 1);
    std::ostringstream progress;
    f.run(progress);
    unsetenv("FAKE_DISAGREE");
    const auto rows = ResultsDb::open({f.db_path, /*read_only=*/false, &test::catalog()}).query({});
    ASSERT_GE(rows.size(), 3u);
    EXPECT_EQ(rows[0].measured.timing, StepTiming::kParts);
    EXPECT_EQ(rows[0].measured.timing_check, disagree ? "disagrees" : "agrees");
    EXPECT_GT(rows[0].measured.check_step_time_s, 0.0);
    EXPECT_GT(rows[0].measured.optimizer_time_s, 0.0);
    for (size_t i = 1; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].measured.timing_check, "") << i;
      EXPECT_EQ(rows[i].measured.timing, disagree ? StepTiming::kWhole : StepTiming::kParts) << i;
    }
    EXPECT_EQ(progress.str().find("TIMING CHECK FAILED") != std::string::npos, disagree)
        << progress.str();
  }
}

}  // namespace
}  // namespace gpudays
