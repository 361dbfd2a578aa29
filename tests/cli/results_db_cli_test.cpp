// The results database and the bench command as a user meets them: rows no trial can have
// measured (a negative or zero step time, parts that do not compose into the step at HFU 109%, a
// 0 s calibration row) are never used by cost, best, export or plan, and each is named in a
// warning; a database that cannot be written stops bench with one line before any trial runs; and
// SIGINT or SIGTERM to a real bench stops its running trial and leaves no process, file or row.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/model_loader.h"
#include "process_dir.h"
#include "results/results_db.h"
#include "sweep/host_probe.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;
namespace fs = std::filesystem;

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr double kTrainSteps = 143000;  // pythia-1b's
constexpr double kStepS = 20.0;         // MFU 52% (at 8 s, the reference's kind of time: 131%)

// Rows 1 to 5: one real trial at 20 s, and four no trial can have measured. Unless every row is
// bad, the first is valid; the parts row would be the fastest, and with the 0 s row it would pull
// the calibration, if they were used.
std::string database_with_bad_rows(const std::string& name, bool keep_the_valid_row) {
  const std::string path = test::write_temp_file(name, "");
  fs::remove(path);
  ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
  TrialRecord valid = test::pythia_1b_trial(1, kStepS, kStepS);
  if (!keep_the_valid_row) valid.measured.step_time_min_s = kStepS + 1;  // above its median
  db.insert(valid);
  TrialRecord negative = test::pythia_1b_trial(2, kStepS, kStepS);
  test::set_measured_step(negative, -5.0);
  negative.training_days = -1.0;
  db.insert(negative);
  TrialRecord zero = test::pythia_1b_trial(4, kStepS, kStepS);
  test::set_measured_step(zero, 0.0);
  db.insert(zero);
  TrialRecord parts =
      test::pythia_1b_trial(64, 7.49, 2.0);  // accumulation 4: 3 x 9.5 + 9.5 + 1.0 = 39 s
  parts.measured.timing = StepTiming::kParts;
  parts.measured.micro_step_time_s = 9.5;
  parts.measured.last_micro_step_time_s = 9.5;
  parts.measured.optimizer_time_s = 1.0;
  parts.hfu = 1.09;
  db.insert(parts);
  TrialRecord calibration = test::pythia_1b_trial(16, kStepS, 1.0);
  test::set_measured_step(calibration, 0.0);
  db.insert(calibration);
  return path;
}

// Each bad row named on one line: its id, what it measured, and why it is ignored.
void expect_warnings(const std::string& what, const std::string& db, const std::string& err) {
  const std::pair<int, const char*> rows[] = {
      {2, "ignored: step times min -5"},
      {3, "ignored: step times min 0"},
      {4, "ignored: parts composing to 39 s against a step time of 7.49 s"},
      {5, "ignored: step times min 0"}};
  for (const auto& [row, problem] : rows) {
    const size_t at =
        err.find(fmt::format("gpudays: warning: {}: trial row {} (pythia-1b on 4 x "
                             "a100-80gb-sxm, free-lunch + zero_1, micro-batch ",
                             db,
                             row));
    ASSERT_NE(at, std::string::npos) << what << ": " << err;
    const std::string line = err.substr(at, err.find('\n', at) - at);
    EXPECT_NE(line.find(problem), std::string::npos) << what << ": " << line;
  }
  EXPECT_EQ(err.find("internal error"), std::string::npos) << what << ": " << err;
}

TEST(ResultsDbCli, RowsNoTrialCanHaveMeasuredAreNeverUsedAndAreNamed) {
  const std::string db = database_with_bad_rows("bad-rows.db", /*keep_the_valid_row=*/true);
  const std::string cluster = " --model pythia-1b --gpu a100 --gpus-per-node 4 --db " + db;

  const auto best = run_gpudays("best" + cluster + " --format json");
  ASSERT_EQ(best.exit_code, 0) << best.err;
  expect_warnings("best", db, best.err);
  const auto best_row = nlohmann::json::parse(best.out)["best"];
  EXPECT_EQ(best_row["micro_batch_size"], 1) << best.out;
  EXPECT_DOUBLE_EQ(best_row["step_time_median_s"].get<double>(), kStepS) << best.out;

  const auto cost = run_gpudays(
      "cost --model pythia-1b --gpus a100 --counts 4 --source bench "
      "--format json --db " +
      db);
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  expect_warnings("cost", db, cost.err);
  const auto cost_row = nlohmann::json::parse(cost.out)["rows"][0];
  EXPECT_NEAR(cost_row["training_days"].get<double>(), kTrainSteps * kStepS / 86400.0, 1e-6);

  const auto exported = run_gpudays("export" + cluster + " --format toml");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  expect_warnings("export", db, exported.err);
  EXPECT_NE(exported.out.find("micro_batch_size = 1\n"), std::string::npos) << exported.out;

  const auto planned = run_gpudays("plan" + cluster + " --format json");
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  expect_warnings("plan", db, planned.err);
  const auto calibration = nlohmann::json::parse(planned.out)["calibration"];
  EXPECT_EQ(calibration["trials"], 1) << planned.out;
  EXPECT_DOUBLE_EQ(calibration["step_time_factor"].get<double>(), 1.0) << planned.out;
}

// With no valid row at all: a one-line error or an option that cannot run, never a number from a
// bad row.
TEST(ResultsDbCli, OnlyBadRowsGiveNoAnswerRatherThanABadOne) {
  const std::string db = database_with_bad_rows("only-bad-rows.db", /*keep_the_valid_row=*/false);
  const std::string cluster = " --model pythia-1b --gpu a100 --gpus-per-node 4 --db " + db;
  for (const std::string& command : {"best" + cluster, "export" + cluster + " --format toml"}) {
    const auto r = run_gpudays(command);
    EXPECT_NE(r.exit_code, 0) << command << ": " << r.out;
    expect_warnings(command, db, r.err);
    const std::string last = r.err.substr(r.err.rfind("gpudays: "));
    EXPECT_EQ(last.rfind("gpudays: error: ", 0), 0u) << command << ": " << r.err;
    EXPECT_EQ(std::count(last.begin(), last.end(), '\n'), 1) << command << ": " << r.err;
    EXPECT_EQ(r.out.find("-5"), std::string::npos) << command << ": " << r.out;
  }
  const auto cost = run_gpudays(
      "cost --model pythia-1b --gpus a100 --counts 4 --source bench "
      "--format json --db " +
      db);
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  expect_warnings("cost", db, cost.err);
  EXPECT_EQ(nlohmann::json::parse(cost.out)["rows"][0]["fits"], false) << cost.out;
}

// A model file whose model is named "pythia-1b" but is not the catalog's pythia-1b (fewer layers)
// has trials of its own: it never becomes the catalog model's best, export or cost, nor the
// other way round.
TEST(ResultsDbCli, AModelFileNamedLikeACatalogModelHasItsOwnResults) {
  ModelSpec mine = test::catalog().model("pythia-1b");
  mine.arch.n_layers = 8;
  const std::string file = test::write_temp_file("not-pythia-1b.toml", model_toml(mine));
  const std::string db = test::write_temp_file("same-name-cli.db", "");
  fs::remove(db);
  {
    ResultsDb results = ResultsDb::open({db, /*read_only=*/false, &test::catalog()});
    results.insert(test::pythia_1b_trial(2, kStepS, kStepS));  // the catalog's, micro-batch 2
    TrialRecord fast = test::pythia_1b_trial(8, kStepS / 2, kStepS / 2);
    test::derive_figures(fast, load_model_file(file));
    results.store_model(load_model_file(file));
    results.insert(fast);  // the file's, faster, micro-batch 8
  }
  const std::string where = " --gpu a100 --gpus-per-node 4 --db " + db;
  const auto best_of = [&](const std::string& model) {
    const auto r = run_gpudays("best " + model + where + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return nlohmann::json::parse(r.out)["best"]["micro_batch_size"].get<int64_t>();
  };
  EXPECT_EQ(best_of("--model pythia-1b"), 2);
  EXPECT_EQ(best_of("--model-file " + file), 8);
  const auto exported =
      run_gpudays("export --model pythia-1b --source bench --format toml" + where);
  EXPECT_NE(exported.out.find("micro_batch_size = 2\n"), std::string::npos) << exported.out;
  const auto mine_listed =
      run_gpudays("results --model-file " + file + " --format json --db " + db);
  EXPECT_EQ(nlohmann::json::parse(mine_listed.out)["rows"].size(), 1u) << mine_listed.out;
  const auto all = nlohmann::json::parse(run_gpudays("results --format json --db " + db).out);
  ASSERT_EQ(all["rows"].size(), 2u);
  EXPECT_EQ(all["rows"][0]["model"], all["rows"][1]["model"]);  // one name shown
  EXPECT_NE(all["rows"][0]["model_digest"], all["rows"][1]["model_digest"]);
  const auto cost = run_gpudays(
      "cost --model pythia-1b --gpus a100 --counts 4 --source bench --format json --db " + db);
  EXPECT_NEAR(nlohmann::json::parse(cost.out)["rows"][0]["training_days"].get<double>(),
              kTrainSteps * kStepS / 86400.0,
              1e-6);
}

// Text in the database that is not UTF-8 (a device name written by another tool, a damaged file)
// is shown with U+FFFD in the JSON outputs; it never ends the command with an internal error.
TEST(ResultsDbCli, TextThatIsNotUtf8IsReplacedInJsonOutput) {
  const std::string db = test::write_temp_file("not-utf8.db", "");
  fs::remove(db);
  {
    ResultsDb results = ResultsDb::open({db, /*read_only=*/false, &test::catalog()});
    TrialRecord t = test::pythia_1b_trial(2, kStepS, kStepS);
    t.measured.device_name = "NVIDIA \xff\xfe A100";
    results.insert(t);
  }
  const std::string replaced = "NVIDIA \xef\xbf\xbd\xef\xbf\xbd A100";
  const auto json = run_gpudays("results --format json --db " + db);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["rows"][0]["device_name"], replaced) << json.out;
  const auto jsonl = run_gpudays("results --format jsonl --db " + db);
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.err;
  EXPECT_EQ(nlohmann::json::parse(jsonl.out)["device_name"], replaced) << jsonl.out;
  const auto best =
      run_gpudays("best --model pythia-1b --gpu a100 --gpus-per-node 4 --format json --db " + db);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(nlohmann::json::parse(best.out)["best"]["device_name"], replaced) << best.out;
}

// A name no catalog model has, shown by the trials of two models from files: best cannot tell
// which is meant and asks for the file; with the file, each has its own best.
TEST(ResultsDbCli, ANameOfTwoModelsFromFilesAsksForTheFile) {
  const std::string db = test::write_temp_file("two-mine.db", "");
  fs::remove(db);
  std::vector<std::string> files;
  {
    ResultsDb results = ResultsDb::open({db, /*read_only=*/false, &test::catalog()});
    for (int64_t layers : {8, 12}) {
      ModelSpec mine = test::catalog().model("pythia-1b");
      mine.name = "mine";
      mine.arch.n_layers = layers;
      files.push_back(test::write_temp_file(fmt::format("mine-{}.toml", layers), model_toml(mine)));
      TrialRecord t = test::pythia_1b_trial(4, kStepS, kStepS);
      t.model = mine.name;
      test::derive_figures(t, mine);
      results.store_model(mine);
      results.insert(t);
    }
  }
  const std::string where = " --gpu a100 --gpus-per-node 4 --db " + db;
  const auto by_name = run_gpudays("best --model mine" + where);
  EXPECT_EQ(by_name.exit_code, 2) << by_name.out;
  EXPECT_EQ(by_name.err,
            fmt::format("gpudays: error: the 2 trials named 'mine' in {} are of 2 different models "
                        "(from model files); name one with --model-file\n",
                        db));
  for (const std::string& file : files) {
    const auto r = run_gpudays("best --model-file " + file + where);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(nlohmann::json::parse(
                run_gpudays("results --model mine --format json --db " + db).out)["rows"]
                .size(),
            2u);
}

struct PipedRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Reads both pipes to their ends (either may fill while the other is read).
void drain(int out_fd, int err_fd, PipedRun& run) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open = 2;
  char buffer[4096];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
        continue;
      }
      close(fds[i].fd);
      fds[i].fd = -1;
      --open;
    }
  }
}

// The gpudays binary with `args`, unable to make any file grow (RLIMIT_FSIZE 0, which binds root
// too; SIGXFSZ ignored, so a write fails with EFBIG instead of killing the process); its output
// comes back through pipes.
PipedRun run_unable_to_write(const std::vector<std::string>& args) {
  int out[2];
  int err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (const int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    signal(SIGXFSZ, SIG_IGN);
    const rlimit none{0, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &none);
    unsetenv("OMP_NUM_THREADS");
    std::vector<char*> argv = {const_cast<char*>(GPUDAYS_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(GPUDAYS_BINARY, argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  PipedRun run;
  drain(out[0], err[0], run);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// This host's CPU probe, cached next to `db` (bench --device cpu then probes nothing).
void write_probe_cache(const std::string& db) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const nlohmann::json probe = {{"device", "cpu"},
                                {"device_name", "Fake CPU"},
                                {"threads", 1},
                                {"matmul_fp32_tflops", 0.05},
                                {"matmul_bf16_tflops", 0.0},
                                {"memory_bandwidth_gb_per_s", 10.0},
                                {"memory_bytes", 8 * kGiB}};
  std::ofstream(host_probe_cache_path(db)) << nlohmann::json{
      {"host_cpu_probes", {{{"host", host}, {"omp_num_threads", ""}, {"probe", probe}}}}};
}

// A database bench cannot write (here: no file may grow, which holds for root as for anyone) is
// refused with one line and exit 2 when it is opened, before any trial runs, and left as it was.
// The host CPU's probe comes from its cache, so that nothing else needs a write.
TEST(ResultsDbCli, ADatabaseThatCannotBeWrittenStopsBenchBeforeAnyTrial) {
  const std::string dir = test::process_temp_dir().fresh_dir("unwritable-db");
  const std::string db = dir + "/gpudays.db";
  {
    ResultsDb::open({db, /*read_only=*/false, &test::catalog()})
        .insert(test::pythia_1b_trial(1, kStepS, kStepS));
  }
  write_probe_cache(db);
  const std::string before = test::read_file(db);
  const PipedRun r =
      run_unable_to_write({"bench",
                           "--model-file",
                           std::string(GPUDAYS_TEST_DATA_DIR) + "/bench-gpt-neox.toml",
                           "--device",
                           "cpu",
                           "--db",
                           db});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fmt::format("gpudays: error: cannot write the results database {} (", db)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(choose another file with --db)\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("[trial"), std::string::npos) << "a trial ran: " << r.out;
  EXPECT_EQ(test::read_file(db), before);
  EXPECT_EQ(ResultsDb::open({db, /*read_only=*/true, &test::catalog()}).query({}).size(), 1u);
}

// A --db that cannot be a results database says what it is: an empty name, a directory, an empty
// file (none of them made or changed).
TEST(ResultsDbCli, ADatabasePathThatIsNoDatabaseSaysWhatItIs) {
  const std::string dir = test::process_temp_dir().fresh_dir("db-paths");
  const std::string empty = dir + "/empty.db";
  std::ofstream(empty).flush();
  const std::pair<std::string, std::string> cases[] = {
      {"''", "the results database path is empty (choose another file with --db)"},
      {dir, dir + " is a directory, not a results database (choose another file with --db)"},
      {empty,
       empty + " is an empty file, not a gpudays results database yet (run `gpudays bench` "
               "first, or give --db)"}};
  for (const auto& [db, message] : cases) {
    for (const char* command : {"results", "best --model pythia-1b --gpu a100 --gpus-per-node 4"}) {
      const auto r = run_gpudays(std::string(command) + " --db " + db);
      EXPECT_EQ(r.exit_code, 2) << command << " " << db;
      EXPECT_EQ(r.err, "gpudays: error: " + message + "\n") << command << " " << db;
    }
  }
  EXPECT_EQ(test::read_file(empty), "");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

// A bench request refused for its model's precision on the host CPU (or an empty --db) is refused
// before the database, or the host CPU's probe cache beside it, is made.
TEST(ResultsDbCli, ARefusedBenchMakesNoDatabase) {
  const std::string dir = test::process_temp_dir().fresh_dir("bench-refused");
  const std::string model =
      test::read_file(test::catalog().config_dir() + "/models/pythia-14m.toml");
  ASSERT_NE(model.find("precision = \"fp16\""), std::string::npos) << model;
  auto r = run_gpudays("bench --model pythia-14m --device cpu --db " + dir + "/b1.db");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("pythia-14m: fp16 on the host CPU"), std::string::npos) << r.err;
  r = run_gpudays("bench --model pythia-14m --device cpu --db ''");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "gpudays: error: --db is empty; name the file to write\n");
  r = run_gpudays("bench --model pythia-160m --gpu a100 --gpus-per-node 3 --db " + dir + "/b2.db");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("does not split into a power-of-two per-GPU batch"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::is_empty(dir));
}

// The processes whose command line mentions `text` (a trial's names its spec file).
std::vector<pid_t> processes_mentioning(const std::string& text) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = test::read_file(entry.path().string() + "/cmdline");
    if (cmdline.find(text) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// A spec file of a running sweep under `tmpdir`, or "".
std::string spec_file_under(const std::string& tmpdir) {
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(tmpdir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("trial.", 0) == 0 && entry.path().extension() == ".json") {
      return entry.path().string();
    }
  }
  return "";
}

// The real bench, its trial running (a real one of a small GPT-NeoX on the CPU, given steps
// enough to last), gets SIGINT or SIGTERM: it exits 130 or 143, its trial process is gone, its
// sweep directory (the spec file) is gone, and no row of the trial was stored.
TEST(BenchSignals, SigintAndSigtermStopTheRunningTrialAndLeaveNothing) {
  if (run_gpudays("trial --help").exit_code != 0) GTEST_SKIP() << "no trial command in this build";
  const std::string db = test::process_temp_dir().fresh_dir("bench-signal-db") + "/gpudays.db";
  for (const int signal : {SIGINT, SIGTERM}) {
    const std::string tmpdir = test::process_temp_dir().fresh_dir("bench-signal-tmp");
    const std::string log = test::process_temp_dir().path() / "bench-signal.log";
    const pid_t bench = fork();
    if (bench == 0) {
      setenv("TMPDIR", tmpdir.c_str(), 1);
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      const std::string model = std::string(GPUDAYS_TEST_DATA_DIR) + "/bench-gpt-neox.toml";
      execl(GPUDAYS_BINARY,
            GPUDAYS_BINARY,
            "bench",
            "--model-file",
            model.c_str(),
            "--device",
            "cpu",
            "--methods",
            "naive",
            "--steps",
            "1000",
            "--trial-timeout",
            "600",
            "--db",
            db.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    std::string spec;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
    while (std::chrono::steady_clock::now() < deadline &&
           (spec.empty() || processes_mentioning(spec).empty())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      spec = spec_file_under(tmpdir);
    }
    ASSERT_FALSE(spec.empty()) << "no trial started: " << test::read_file(log);
    const std::vector<pid_t> trials = processes_mentioning(spec);
    ASSERT_FALSE(trials.empty()) << spec;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into its steps
    kill(bench, signal);
    int status = 0;
    waitpid(bench, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << test::read_file(log);
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal) << test::read_file(log);
    EXPECT_NE(test::read_file(log).find(fmt::format("interrupted by signal {}", signal)),
              std::string::npos)
        << test::read_file(log);
    for (const pid_t pid : trials) {
      EXPECT_NE(::kill(pid, 0), 0) << "trial " << pid << " outlived bench";
    }
    EXPECT_TRUE(processes_mentioning(tmpdir).empty()) << "a process of the sweep is left";
    EXPECT_FALSE(fs::exists(fs::path(spec).parent_path())) << spec << "'s directory is left";
    EXPECT_TRUE(fs::is_empty(tmpdir)) << tmpdir << " holds files of the sweep";
    EXPECT_TRUE(ResultsDb::open({db, /*read_only=*/true, &test::catalog()}).query({}).empty());
  }
}

// A database with gpudays' stamp but a column dropped by hand: bench refuses it in one line, exit
// 2, before any trial runs, and leaves it as it was.
TEST(ResultsDbCli, ADatabaseWithoutOneOfItsColumnsStopsBenchBeforeAnyTrial) {
  const std::string dir = test::process_temp_dir().fresh_dir("dropped-column-db");
  const std::string db = dir + "/gpudays.db";
  {
    ResultsDb::open({db, /*read_only=*/false, &test::catalog()})
        .insert(test::pythia_1b_trial(1, kStepS, kStepS));
  }
  test::exec_sql(db, "ALTER TABLE trials DROP COLUMN peak_memory_bytes");
  write_probe_cache(db);
  const std::string before = test::read_file(db);
  const auto r = run_gpudays("bench --model-file " + std::string(GPUDAYS_TEST_DATA_DIR) +
                             "/bench-gpt-neox.toml --device cpu --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err,
            fmt::format("gpudays: error: {} is a gpudays results database (schema 6) whose table "
                        "'trials' lacks the column 'peak_memory_bytes' (edited or damaged); left "
                        "untouched\n",
                        db));
  EXPECT_EQ(r.out.find("[trial"), std::string::npos) << "a trial ran: " << r.out;
  EXPECT_EQ(test::read_file(db), before);
}

}  // namespace
}  // namespace gpudays
