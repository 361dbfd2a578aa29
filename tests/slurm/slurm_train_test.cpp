// `train --slurm` as a user meets it. SlurmCli: the script (--dry-run) and bad input before
// submission, without a controller. SlurmCluster (through the real controller of the CTest entry
// Slurm.Cluster): a 2-rank CPU training job of tests/data/slurm-tiny.toml gives the losses of the
// same run under mpirun bit for bit; a job cancelled after its first checkpoint writes one more
// on SIGTERM and, submitted again, resumes and ends on the uninterrupted run's losses, bit for bit
// (the trainer's CPU resume is exact at a fixed thread count: one per rank here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/child_process.h"
#include "distributed/launcher.h"
#include "process_dir.h"
#include "slurm/jobs_file.h"
#include "slurm_test_util.h"
#include "test_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

using test::job_status;
using test::read_file;
using test::run_gpudays;

const std::string kData = GPUDAYS_TEST_DATA_DIR;

// A run directory: run.toml (tests/data/slurm-tiny.toml on 1 node x 2 CPU ranks, micro-batches of
// 2, no evaluation) and tokens.u16 (a random walk over 64 of the model's 128 tokens).
struct TrainRun {
  fs::path dir;
  std::string config;
  std::string data;
};

TrainRun make_train_run(const std::string& name, int64_t steps, int64_t checkpoint_interval) {
  TrainRun run;
  run.dir = test::process_temp_dir().fresh_dir(name);
  run.config = (run.dir / "run.toml").string();
  run.data = (run.dir / "tokens.u16").string();
  std::ofstream(run.config) << "model_file = \"" << kData << "/slurm-tiny.toml\"\n"
                            << "gpu = \"cpu\"\nnum_nodes = 1\ngpus_per_node = 2\n"
                            << "[methods]\nsharding = \"none\"\n"
                            << "[batch]\nglobal_batch = 4\nmicro_batch_size = 2\n"
                            << "grad_acc_steps = 1\n[schedule]\nsteps = " << steps << "\n"
                            << "[train]\nseed = 3\ncheckpoint_interval = " << checkpoint_interval
                            << "\nkeep_checkpoints = 2\neval_interval = 0\nlog_interval = 50\n"
                            << "[data]\neval_fraction = 0.02\n";
  std::mt19937 rng(5);
  std::vector<uint16_t> tokens(20000);
  uint16_t t = 1;
  for (uint16_t& x : tokens) x = t = static_cast<uint16_t>((7 * t + rng() % 2) % 64);
  std::ofstream(run.data, std::ios::binary)
      .write(reinterpret_cast<const char*>(tokens.data()),
             static_cast<std::streamsize>(tokens.size() * sizeof(uint16_t)));
  return run;
}

std::string train_args(const TrainRun& run, const std::string& out) {
  return "train --config " + run.config + " --data " + run.data + " --out " +
         (run.dir / out).string();
}

// step -> metrics line of OUT/metrics.jsonl.
std::map<int64_t, nlohmann::json> metrics(const fs::path& out) {
  std::map<int64_t, nlohmann::json> by_step;
  std::ifstream in(out / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    by_step[j.at("step").get<int64_t>()] = j;
  }
  return by_step;
}

void expect_same_losses(const std::map<int64_t, nlohmann::json>& expected,
                        const std::map<int64_t, nlohmann::json>& got) {
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [step, j] : expected) {
    ASSERT_EQ(got.count(step), 1u) << "step " << step;
    EXPECT_EQ(got.at(step).at("loss").get<double>(), j.at("loss").get<double>()) << "step " << step;
  }
}

// ---- Without a controller ----

// `train` is in a gpudays built with LibTorch only (make build WITH_TORCH=OFF has none); any
// other failure of `train --help` is a failure, not a reason to skip.
bool gpudays_trains() {
  static const bool trains =
      run_gpudays("train --help").err.find("unknown command 'train'") == std::string::npos;
  return trains;
}

TEST(SlurmCli, TrainDryRunPrintsTheJobEveryTaskRuns) {
  if (!gpudays_trains()) GTEST_SKIP() << "this gpudays was built without LibTorch";
  const test::ScopedEnv no_slurm("SLURM_CONF", "/nonexistent/slurm.conf");
  const TrainRun run = make_train_run("train-dry-run", 10, 5);
  const std::string dir = (run.dir / "slurm").string();
  const auto r = run_gpudays(train_args(run, "out") + " --cluster " + kData +
                             "/slurm-cluster.toml --partition cpu --time 30 --slurm --dry-run "
                             "--slurm-dir " +
                             dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string srun =
      "\nsrun --nodes=1 --ntasks=2 --ntasks-per-node=2 --mpi=pmix --kill-on-bad-exit=1 ";
  for (const std::string& expected : {std::string("#SBATCH --job-name=gpudays-train-slurm-tiny\n"),
                                      std::string("#SBATCH --ntasks-per-node=2\n"),
                                      std::string("#SBATCH --cpus-per-task=1\n"),
                                      std::string("#SBATCH --signal=TERM@300\n"),
                                      std::string("export OMP_NUM_THREADS=1\n"),
                                      std::string("export MASTER_ADDR="),
                                      srun,
                                      " train --config " + run.config + " --data " + run.data +
                                          " --out " + (run.dir / "out").string() + " --resume\n",
                                      std::string("not submitted (--dry-run)")}) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in\n" << r.out;
  }
  EXPECT_EQ(r.out.find("--gres"), std::string::npos) << "CPU ranks ask for no GPU";
  EXPECT_EQ(r.out.find("--partition cpu"), std::string::npos) << "Slurm options stay out";
  EXPECT_FALSE(fs::exists(jobs_file_path(dir)));
}

// A time limit shorter than the plan's estimate of the whole run on the job's GPUs is a warning
// with the numbers (the job checkpoints before its limit and resumes when submitted again).
TEST(SlurmCli, TrainTimeLimitBelowThePlansEstimateWarnsWithTheNumbers) {
  if (!gpudays_trains()) GTEST_SKIP() << "this gpudays was built without LibTorch";
  const test::ScopedEnv no_slurm("SLURM_CONF", "/nonexistent/slurm.conf");
  TrainRun run = make_train_run("train-short", 10, 5);
  std::ofstream(run.config) << "model_file = \"" << kData << "/slurm-tiny.toml\"\n"
                            << "gpu = \"a100-80gb-sxm\"\nnum_nodes = 1\ngpus_per_node = 2\n"
                            << "[methods]\nsharding = \"none\"\n"
                            << "[batch]\nglobal_batch = 4\nmicro_batch_size = 2\n"
                            << "grad_acc_steps = 1\n[schedule]\nsteps = 10000000\n";
  const std::string dir = (run.dir / "slurm").string();
  const std::string args = train_args(run, "out") + " --cluster " + kData +
                           "/slurm-cluster.toml --partition a100 --slurm --dry-run --slurm-dir " +
                           dir;
  const auto short_limit = run_gpudays(args + " --time 1");
  ASSERT_EQ(short_limit.exit_code, 0) << short_limit.err;
  EXPECT_TRUE(std::regex_search(
      short_limit.err,
      std::regex("warning: time limit 60\\.00 s is shorter than the plan's estimate of .* "
                 "\\(10000000 steps x [0-9.e-]+ s predicted per step; the whole run\\)")))
      << short_limit.err;
  EXPECT_NE(short_limit.out.find("#SBATCH --gres=gpu:2\n"), std::string::npos) << short_limit.out;
  const auto long_limit = run_gpudays(args + " --time 2-00:00:00");
  ASSERT_EQ(long_limit.exit_code, 0) << long_limit.err;
  EXPECT_EQ(long_limit.err.find("warning: time limit"), std::string::npos) << long_limit.err;
}

TEST(SlurmCli, TrainBadInputIsRefusedBeforeSubmission) {
  if (!gpudays_trains()) GTEST_SKIP() << "this gpudays was built without LibTorch";
  const TrainRun run = make_train_run("train-refused", 10, 5);
  const std::string dir = (run.dir / "slurm").string();
  const std::string cluster = " --cluster " + kData + "/slurm-cluster.toml --partition cpu ";
  auto expect_refused = [&](const std::string& args, const std::string& needle) {
    const bool slurm = args.find("--slurm") != std::string::npos;
    const auto r = run_gpudays(args + (slurm ? " --slurm-dir " + dir : ""));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(jobs_file_path(dir))) << args;
    EXPECT_FALSE(fs::exists(run.dir / "out")) << "nothing trained: " << args;
  };
  const std::string train = train_args(run, "out");
  expect_refused(train + cluster + "--gpus-per-node 3 --slurm",
                 "global batch 4 does not split into micro-batches of 2 on 3 ranks");
  // The partition's limits (checked against the cluster file; --dry-run needs no controller).
  expect_refused(train + cluster + "--cpus-per-task 2 --slurm --dry-run",
                 "2 tasks x 2 CPUs per node asked, but partition 'cpu' has 2 CPUs per node");
  expect_refused(
      train + " --cluster " + kData + "/slurm-cluster.toml --partition gpu --slurm --dry-run",
      "unknown partition 'gpu'");
  expect_refused("train --config " + run.config + " --data /nonexistent.u16 --out " +
                     (run.dir / "out").string() + cluster + "--slurm",
                 "/nonexistent.u16");
  expect_refused(train + " --nodes 2", "--nodes applies only with --slurm");
  const test::ScopedEnv no_controller("SLURM_CONF", "/nonexistent/slurm.conf");
  expect_refused(train + cluster + "--slurm", "no Slurm controller");
}

// ---- Through a real controller ----

// The run without Slurm: 2 ranks under mpirun, one thread each; its length chosen from this
// machine's speed so that a job cancelled at its first checkpoint still has about kRemainingS of
// steps left (a cancel that arrived after a too-short job had finished failed CI once), yet a whole
// run stays short on a loaded 2-core machine.
struct Reference {
  TrainRun run;
  int64_t steps = 0;
  int64_t checkpoint_interval = 0;
  std::map<int64_t, nlohmann::json> losses;
};

constexpr double kRemainingS = 12.0;

ChildResult mpirun_two_ranks(const std::string& args) {
  LaunchOptions launch;
  launch.ranks = 2;
  launch.threads_per_rank = 1;
  launch.program = {GPUDAYS_BINARY};
  std::string line;
  for (const std::string& a : launch_argv(launch)) line += a + " ";
  return run_child({"/bin/sh", "-c", line + args}, ChildOptions{600.0, ""});
}

const Reference& reference() {
  static const Reference ref = [] {
    Reference r;
    // Calibration: the mean step time of 40 steps (the first, slower, left out).
    const TrainRun probe = make_train_run("train-probe", 40, 0);
    const ChildResult p = mpirun_two_ranks(train_args(probe, "out"));
    EXPECT_EQ(p.exit_code, 0) << p.err;
    double total_s = 0.0;
    const auto probed = metrics(probe.dir / "out");
    for (const auto& [step, j] : probed)
      total_s += step > 1 ? j.at("step_time_s").get<double>() : 0;
    const double step_s =
        probed.size() > 1 ? total_s / static_cast<double>(probed.size() - 1) : 0.05;
    r.steps = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(kRemainingS / step_s)), 100, 4000);
    r.checkpoint_interval = std::max<int64_t>(5, r.steps / 20);
    r.run = make_train_run("train-reference", r.steps, r.checkpoint_interval);
    const ChildResult whole = mpirun_two_ranks(train_args(r.run, "mpirun"));
    EXPECT_EQ(whole.exit_code, 0) << whole.err;
    r.losses = metrics(r.run.dir / "mpirun");
    std::cerr << fmt::format("reference: {:.1f} ms per step, {} steps, a checkpoint every {}\n",
                             1e3 * step_s,
                             r.steps,
                             r.checkpoint_interval);
    return r;
  }();
  return ref;
}

// Submits the reference's run as a training job on 1 node x 2 CPU ranks; returns its job id.
std::string submit_training(const std::string& out, const std::string& dir) {
  return test::submitted_job_id(run_gpudays(train_args(reference().run, out) +
                                            " --slurm --time 10 --cpus-per-task 1 --slurm-dir " +
                                            dir));
}

TEST(SlurmCluster, TrainingJobGivesTheLossesOfTheRunWithoutSlurm) {
  REQUIRE_CONTROLLER();
  const Reference& ref = reference();
  ASSERT_EQ(static_cast<int64_t>(ref.losses.size()), ref.steps);
  const std::string dir = (ref.run.dir / "slurm-whole").string();
  const std::string id = submit_training("slurm-whole", dir);
  ASSERT_FALSE(id.empty());
  const nlohmann::json job = test::wait_until_finished(id, dir);
  ASSERT_EQ(job.value("state", ""), "COMPLETED") << read_file(job.value("log", ""));
  EXPECT_EQ(job.at("kind"), "train");
  EXPECT_EQ(job.at("steps_done"), ref.steps);
  EXPECT_EQ(job.at("last_checkpoint"), ref.steps);
  const std::string log = read_file(job.at("log"));
  EXPECT_NE(log.find("trained " + std::to_string(ref.steps) + " steps"), std::string::npos) << log;
  expect_same_losses(ref.losses, metrics(ref.run.dir / "slurm-whole"));
}

TEST(SlurmCluster, CancelledTrainingJobResumesToTheUninterruptedLosses) {
  REQUIRE_CONTROLLER();
  const Reference& ref = reference();
  const std::string dir = (ref.run.dir / "slurm-cancel").string();
  const fs::path out = ref.run.dir / "cancelled";
  const std::string first = submit_training("cancelled", dir);
  ASSERT_FALSE(first.empty());
  const nlohmann::json running = test::wait_for(first, dir, [](const nlohmann::json& j) {
    return !j.value("last_checkpoint", nlohmann::json()).is_null();
  });
  ASSERT_EQ(running.value("state", ""), "RUNNING") << "the cancel must reach a running job";
  ASSERT_FALSE(running.at("last_checkpoint").is_null());
  const auto cancel = run_gpudays("jobs cancel " + first + " --slurm-dir " + dir);
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(cancel.out.find("submitting it again resumes from it"), std::string::npos);
  const nlohmann::json cancelled = test::wait_until_finished(first, dir);
  EXPECT_EQ(cancelled.value("state", ""), "CANCELLED");
  // SIGTERM reached the ranks mid-run: they wrote a complete checkpoint at the step in flight.
  const std::string log = read_file(cancelled.at("log"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      log, m, std::regex("signal 15: checkpoint step-([0-9]+) written; continue with --resume")))
      << log;
  const int64_t stopped_at = std::stoll(m[1]);
  EXPECT_LT(stopped_at, ref.steps) << "the job ended before the cancel";
  EXPECT_TRUE(
      fs::exists(out / ("checkpoints/step-" + std::to_string(stopped_at)) / "manifest.json"));
  // Submitted again: it resumes from that checkpoint and ends on the uninterrupted run's losses.
  const std::string second = submit_training("cancelled", dir);
  ASSERT_FALSE(second.empty());
  const nlohmann::json resumed = test::wait_until_finished(second, dir);
  ASSERT_EQ(resumed.value("state", ""), "COMPLETED") << read_file(resumed.value("log", ""));
  const std::string resumed_log = read_file(resumed.at("log"));
  EXPECT_NE(resumed_log.find("resumed from " + (out / "checkpoints").string() + "/step-" +
                             std::to_string(stopped_at)),
            std::string::npos)
      << resumed_log;
  expect_same_losses(ref.losses, metrics(out));
  std::cerr << fmt::format("cancelled at step {} of {}, resumed\n", stopped_at, ref.steps);
}

}  // namespace
}  // namespace gpudays
