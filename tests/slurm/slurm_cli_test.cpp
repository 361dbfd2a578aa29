// `bench --slurm` and `gpudays jobs` as a user meets them. SlurmCli: the script and bad input
// before submission, without a controller. SlurmCluster: through a real controller (the CTest
// entry Slurm.Cluster starts one with scripts/slurm-local.sh and sets SLURM_CONF; elsewhere they
// skip): sweeps on 1 node x 2 ranks and 2 nodes x 1 rank land in the database, two jobs on one
// database lose nothing, a cancelled sweep leaves no partial row and resumes when re-submitted.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "process_dir.h"
#include "results/results_db.h"
#include "slurm/jobs_file.h"
#include "slurm_test_util.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::job_status;
using test::read_file;
using test::run_gpudays;
using test::ScopedEnv;
using test::submitted_job_id;
using test::wait_for;
using test::wait_until_finished;

const std::string kData = GPUDAYS_TEST_DATA_DIR;
const std::string kCluster = "--cluster " + kData + "/slurm-cluster.toml";
const std::string kTiny = "--model-file " + kData + "/slurm-tiny.toml --device cpu";

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// Exit 2, one line naming `needle`, and no job recorded under `slurm_dir`.
void expect_refused(const std::string& args, const std::string& needle, const std::string& dir) {
  const auto r = run_gpudays("bench " + args + " --slurm --slurm-dir " + dir);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(jobs_file_path(dir))) << args;
}

TEST(SlurmCli, DryRunPrintsAReadableScriptWithoutAController) {
  const ScopedEnv no_slurm("SLURM_CONF", "/nonexistent/slurm.conf");
  const std::string dir = test::process_temp_dir().fresh_dir("dry-run");
  const auto r = run_gpudays("bench " + kTiny + " --gpus-per-node 2 " + kCluster +
                             " --partition cpu --time 30 --slurm --dry-run --slurm-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* expected : {"#SBATCH --partition=cpu\n",
                               "#SBATCH --account=proj42\n",
                               "#SBATCH --ntasks-per-node=2\n",
                               "#SBATCH --cpus-per-task=1\n",
                               "#SBATCH --time=0-00:30:00\n",
                               "module load cuda/12.4\n",
                               "export SLURM_MPI_TYPE=pmix\n",
                               " bench --model-file ",
                               " --launcher srun --srun-mpi pmix",
                               "not submitted (--dry-run)"}) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in\n" << r.out;
  }
  EXPECT_EQ(r.out.find("--gres"), std::string::npos) << "CPU ranks ask for no GPU";
  EXPECT_FALSE(std::filesystem::exists(jobs_file_path(dir)));
}

// Whether this gpudays has the trainer (a LibTorch build): `trial` runs the host probe.
bool has_trainer() {
  static const bool trains = run_gpudays("trial --probe-device cpu").exit_code == 0;
  return trains;
}

const std::string kNoTrainer = "this build has no trainer (built without LibTorch)";

// A build without the trainer shows the script (--dry-run) but submits nothing: the job would run
// this binary, whose every trial fails. The request's own faults are named first.
TEST(SlurmCli, ABuildWithoutTheTrainerSubmitsNoBenchJob) {
  if (has_trainer()) GTEST_SKIP() << "this build has the trainer";
  const ScopedEnv no_slurm("SLURM_CONF", "/nonexistent/slurm.conf");
  const std::string dir = test::process_temp_dir().fresh_dir("no-trainer");
  const std::string args = kTiny + " --gpus-per-node 2 " + kCluster + " --time 30";
  expect_refused(args + " --partition cpu", kNoTrainer, dir);
  expect_refused(args + " --partition h100", "unknown partition 'h100'", dir);
  const auto dry =
      run_gpudays("bench " + args + " --partition cpu --slurm --dry-run --slurm-dir " + dir);
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("not submitted (--dry-run)"), std::string::npos) << dry.out;
}

TEST(SlurmCli, BadInputIsRefusedBeforeSubmission) {
  const std::string dir = test::process_temp_dir().fresh_dir("refused");
  const std::string gpu = "--model pythia-160m --gpu a100-80gb-sxm " + kCluster;
  expect_refused(gpu + " --partition h100 --dry-run", "unknown partition 'h100'", dir);
  expect_refused(gpu + " --gpus-per-node 8 --dry-run", "8 GPUs per node asked", dir);
  expect_refused(gpu + " --time 3-00:00:00 --dry-run", "above partition 'a100''s limit", dir);
  expect_refused(gpu + " --time 1:2:3:4 --dry-run", "not a Slurm time", dir);
  // A newline in a value would end the #SBATCH block and run the rest as a shell line.
  for (const char* flag : {"--qos", "--account", "--partition"}) {
    expect_refused(gpu + " " + flag + " \"$(printf 'q\\nrm -rf x')\" --dry-run",
                   "has a space or a control character",
                   dir);
  }
  std::string text = test::read_file(kData + "/slurm-cluster.toml");
  text.replace(text.find("qos = \"normal\""), 14, "qos = \"q\\nrm -rf x\"");
  const std::string cluster = test::write_temp_file("newline-cluster.toml", text);
  expect_refused("--model pythia-160m --gpu a100-80gb-sxm --cluster " + cluster + " --dry-run",
                 "qos: a name with a control character (a newline, tab or NUL) in it",
                 dir);
  text.replace(text.find("qos = \"q\\nrm -rf x\""), 19, "qos = \"q rm\"");
  const std::string spaced = test::write_temp_file("spaced-cluster.toml", text);
  expect_refused("--model pythia-160m --gpu a100-80gb-sxm --cluster " + spaced + " --dry-run",
                 "qos: 'q rm' has a space or a control character",
                 dir);
  {
    const ScopedEnv no_controller("SLURM_CONF", "/nonexistent/slurm.conf");
    expect_refused(kTiny + " " + kCluster + " --partition cpu",
                   has_trainer() ? "no Slurm controller" : kNoTrainer,
                   dir);
  }
  const ScopedEnv no_slurm("PATH", "/nonexistent");
  expect_refused(kTiny + " " + kCluster + " --partition cpu",
                 has_trainer() ? "Slurm is not installed" : kNoTrainer,
                 dir);
}

// Trials that would run here under srun outside a Slurm allocation, or on several nodes under
// mpirun, are refused before any runs: no launch failure is stored as a configuration's crash.
TEST(SlurmCli, TrialsOutsideAnAllocationAreRefusedBeforeAnyRuns) {
  const ScopedEnv no_job("SLURM_JOB_ID", nullptr);
  const std::string dir = test::process_temp_dir().fresh_dir("no-allocation");
  const std::string db = dir + "/results.db";
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {" --gpus-per-node 2 --launcher srun", "no SLURM_JOB_ID"},
           {" --nodes 2", "--nodes 2: trials over several nodes run under srun"}}) {
    const auto r = run_gpudays("bench " + kTiny + args + " --db " + db);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << args;
  }
  // Inside an allocation: more nodes than it holds are refused as well.
  const ScopedEnv job("SLURM_JOB_ID", "42");
  const ScopedEnv one_node("SLURM_JOB_NUM_NODES", "1");
  const auto r = run_gpudays("bench " + kTiny + " --nodes 2 --launcher srun --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--nodes 2: this Slurm allocation has 1 node"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(SlurmCli, ATimeLimitBelowThePlansEstimateWarnsWithTheNumbers) {
  const std::string dir = test::process_temp_dir().fresh_dir("short");
  const auto r = run_gpudays("bench --model pythia-160m --gpu a100-80gb-sxm --gpus-per-node 4 " +
                             kCluster + " --time 1 --slurm --dry-run --slurm-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("warning: time limit 60\\.00 s is shorter than the plan's estimate of")))
      << r.err;
  EXPECT_NE(r.err.find("configurations that fit"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("#SBATCH --gres=gpu:4\n"), std::string::npos) << r.out;
}

TEST(SlurmCli, JobsWithNothingSubmittedSaysSo) {
  const std::string dir = test::process_temp_dir().fresh_dir("none");
  const auto r = run_gpudays("jobs --slurm-dir " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No Slurm jobs"), std::string::npos);
  const auto c = run_gpudays("jobs cancel 123 --slurm-dir " + dir);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("job '123' was not submitted"), std::string::npos) << c.err;
}

// `jobs --format json` with nothing submitted is the same document with no jobs; a --slurm-dir
// that is a file, and a jobs.jsonl line that is not a job, are one-line errors in words.
TEST(SlurmCli, JobsListsNothingAsJsonAndNamesABadDirectoryOrLine) {
  const std::string dir = test::process_temp_dir().fresh_dir("jobs-json");
  const auto json = run_gpudays("jobs --format json --slurm-dir " + dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["jobs"], nlohmann::json::array());
  EXPECT_TRUE(doc.contains("schema_version")) << json.out;
  const std::string file = dir + "/not-a-dir";
  std::ofstream(file) << "x\n";
  for (const std::string& args :
       {"jobs --slurm-dir " + file, "jobs cancel 1 --slurm-dir " + file}) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, "gpudays: error: --slurm-dir " + file + " is not a directory\n") << args;
  }
  const auto empty = run_gpudays("jobs --slurm-dir ''");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "gpudays: error: --slurm-dir is empty; name the directory of jobs.jsonl\n");
  std::ofstream(jobs_file_path(dir)) << "{\"job_id\": \"1\"}\n";
  auto r = run_gpudays("jobs --slurm-dir " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: " + jobs_file_path(dir) +
                ":1: not a submitted job: the line has no 'kind' key\n");
  std::ofstream(jobs_file_path(dir)) << "{\"job_id\": \n";
  r = run_gpudays("jobs --slurm-dir " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":1: not a submitted job: the line is not JSON (at column "),
            std::string::npos)
      << r.err;
  const std::string holder = test::process_temp_dir().fresh_dir("jobs-file-a-dir");
  std::filesystem::create_directories(jobs_file_path(holder));  // jobs.jsonl a directory
  r = run_gpudays("jobs --slurm-dir " + holder);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err,
            "gpudays: error: " + jobs_file_path(holder) + " is a directory, not the jobs file\n");
}

// bench's Slurm flags without --slurm, and --device cpu with a catalog GPU, are refused (not
// ignored while a real benchmark runs); nothing is written.
TEST(SlurmCli, BenchRefusesSlurmFlagsWithoutSlurmAndAGpuWithDeviceCpu) {
  const std::string dir = test::process_temp_dir().fresh_dir("bench-flags");
  const std::string db = " --db " + dir + "/b.db";
  auto r = run_gpudays("bench " + kTiny + " --dry-run" + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpudays: error: --dry-run applies only with --slurm\n");
  r = run_gpudays("bench " + kTiny + " " + kCluster + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpudays: error: --cluster applies only with --slurm\n");
  r = run_gpudays("bench " + kTiny + " --gpu a100" + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: --device cpu benchmarks the host CPU, not a100: leave out --gpu or "
            "--device cpu\n");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(SlurmCli, PlanOnAClusterUsesItsPartitionNetworkAndHostMemory) {
  const std::string plan = "plan --model pythia-1b --nodes 2 --format json ";
  const auto from_file = run_gpudays(plan + kCluster + " --partition a100");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  const auto spelled_out = run_gpudays(plan +
                                       "--gpu a100-80gb-sxm --gpus-per-node 4 "
                                       "--inter-node-gb-per-s 25 --host-memory-gib 512");
  ASSERT_EQ(spelled_out.exit_code, 0) << spelled_out.err;
  EXPECT_EQ(from_file.out, spelled_out.out);
  const auto default_network = run_gpudays(plan + "--gpu a100-80gb-sxm --gpus-per-node 4");
  EXPECT_NE(from_file.out, default_network.out) << "the file's network and memory are used";
  const auto too_many = run_gpudays("plan --model pythia-1b --nodes 9 " + kCluster);
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("9 nodes asked, but partition 'a100'"), std::string::npos)
      << too_many.err;
}

// The partition's CPUs per GPU (64 / 4) feed the image loader: 15 workers at 644 images/s each
// decoding JPEGs; --cpu-cores-per-gpu wins over the file.
TEST(SlurmCli, PlanOnAClusterGivesTheLoaderItsCpusPerGpu) {
  const std::string plan = "plan --model vit --image-input jpeg --format json " + kCluster;
  auto loader = [](const std::string& args) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["best"]["input_images_per_s"].get<double>();
  };
  EXPECT_DOUBLE_EQ(loader(plan), 15 * 644.0);
  EXPECT_DOUBLE_EQ(loader(plan + " --cpu-cores-per-gpu 3"), 2 * 644.0);
  EXPECT_DOUBLE_EQ(loader("plan --model vit --gpu a100 --image-input jpeg --format json"),
                   7 * 644.0);  // the assumption: 8 cores per GPU
}

TEST(SlurmCli, CostPricesTheAllocationAtTheClustersRate) {
  const std::string cost = "cost --model pythia-1b --gpus a100-80gb-sxm --counts 8 --format json ";
  auto row = [](const std::string& args) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("rows").at(0);
  };
  const nlohmann::json catalog = row(cost);
  const nlohmann::json cluster = row(cost + kCluster);
  EXPECT_EQ(cluster.at("cloud_usd_per_gpu_hour"), 1.5);  // tests/data/slurm-cluster.toml
  EXPECT_NE(cluster.at("cloud_price_source").get<std::string>().find("slurm-cluster.toml"),
            std::string::npos);
  EXPECT_NEAR(cluster.at("cloud_usd").get<double>(),
              catalog.at("cloud_usd").get<double>() * 1.5 /
                  catalog.at("cloud_usd_per_gpu_hour").get<double>(),
              1e-6 * catalog.at("cloud_usd").get<double>());
  EXPECT_EQ(row(cost + kCluster + " --cloud-price a100-80gb-sxm=2").at("cloud_usd_per_gpu_hour"),
            2.0);  // the flag wins
}

// ---- Through a real controller ----

// Submits a sweep of `model` (kTiny unless given); returns its job id.
std::string submit(const std::string& args,
                   const std::string& dir,
                   const std::string& model = kTiny,
                   int trial_timeout_s = 120) {
  return submitted_job_id(run_gpudays(
      "bench " + model + " " + args + " --methods naive --timing whole --trial-timeout " +
      std::to_string(trial_timeout_s) + " --slurm --time 15 --slurm-dir " + dir));
}

// "N trials run, M reused" of the job's log.
std::pair<int, int> trials_run_and_reused(const std::string& log) {
  std::smatch m;
  const std::string text = read_file(log);
  if (!std::regex_search(text, m, std::regex("([0-9]+) trials run, ([0-9]+) reused"))) {
    ADD_FAILURE() << "no summary in " << log << ":\n" << text;
    return {-1, -1};
  }
  return {std::stoi(m[1]), std::stoi(m[2])};
}

std::vector<TrialRecord> trials(const std::string& db, int64_t nodes, int64_t ranks_per_node) {
  TrialFilter filter;
  filter.num_nodes = nodes;
  filter.gpus_per_node = ranks_per_node;
  return ResultsDb::open({db, /*read_only=*/true, &test::catalog()}).query(filter);
}

int count_ok(const std::vector<TrialRecord>& rows) {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const TrialRecord& t) { return t.ok(); }));
}

// A finished sweep: COMPLETED, every trial it ran stored, at least one measured.
void expect_sweep_stored(const std::string& id,
                         const std::string& dir,
                         const std::string& db,
                         int64_t nodes,
                         int64_t ranks_per_node) {
  const nlohmann::json job = wait_until_finished(id, dir);
  ASSERT_EQ(job.value("state", ""), "COMPLETED") << read_file(job.value("log", ""));
  const auto [run, reused] = trials_run_and_reused(job.at("log"));
  const auto rows = trials(db, nodes, ranks_per_node);
  EXPECT_EQ(static_cast<int>(rows.size()), run + reused) << read_file(job.at("log"));
  EXPECT_GE(count_ok(rows), 1) << read_file(job.at("log"));
  EXPECT_EQ(job.at("trials_stored"), run);
}

TEST(SlurmCluster, TwoRankSweepRunsEndToEndAndLandsInTheDatabase) {
  REQUIRE_CONTROLLER();
  const std::string dir = test::process_temp_dir().fresh_dir("two-ranks");
  const std::string db = dir + "/results.db";
  const std::string id = submit("--gpus-per-node 2 --db " + db, dir);
  ASSERT_FALSE(id.empty());
  expect_sweep_stored(id, dir, db, 1, 2);
  // The log is in the known place, named after the job.
  const std::string log = read_file(dir + "/gpudays-bench-slurm-tiny-cpu-" + id + ".out");
  EXPECT_NE(log.find("gpudays job " + id + " on gpd"), std::string::npos) << log;
}

TEST(SlurmCluster, TwoNodesOfOneRankEach) {
  REQUIRE_CONTROLLER();
  const std::string dir = test::process_temp_dir().fresh_dir("two-nodes");
  const std::string db = dir + "/results.db";
  const std::string id = submit("--nodes 2 --gpus-per-node 1 --db " + db, dir);
  ASSERT_FALSE(id.empty());
  expect_sweep_stored(id, dir, db, 2, 1);
}

TEST(SlurmCluster, TwoJobsWritingToOneDatabaseLoseNothing) {
  REQUIRE_CONTROLLER();
  const std::string dir = test::process_temp_dir().fresh_dir("two-jobs");
  const std::string db = dir + "/results.db";
  const std::string a = submit("--gpus-per-node 2 --db " + db, dir);
  const std::string b = submit("--gpus-per-node 1 --db " + db, dir);
  ASSERT_FALSE(a.empty() || b.empty());
  expect_sweep_stored(a, dir, db, 1, 2);
  expect_sweep_stored(b, dir, db, 1, 1);
}

// Every micro-batch of a slower model (tests/data/slurm-slow.toml), so that the job still runs
// when the cancel arrives: with the tiny model a fast machine finished the sweep first. The cancel
// follows the first stored trial within a second or two, while the second trial, as long as the
// first, runs: 20 steps keep a trial above 4 s on a fast machine and near 45 s on a loaded 2-core
// one (2 s per step at a load average of 11, where 50 steps took the entry past its 900 s). A
// trial recorded as a timeout would end the sweep before the cancel: they get 600 s.
const std::string kSlow =
    "--model-file " + kData + "/slurm-slow.toml --device cpu --strategy exhaustive --steps 20";
constexpr int kSlowTrialTimeoutS = 600;

TEST(SlurmCluster, CancelledSweepLeavesNoPartialRowAndResumes) {
  REQUIRE_CONTROLLER();
  const std::string dir = test::process_temp_dir().fresh_dir("cancel");
  const std::string db = dir + "/results.db";
  const std::string first = submit("--gpus-per-node 1 --db " + db, dir, kSlow, kSlowTrialTimeoutS);
  ASSERT_FALSE(first.empty());
  const nlohmann::json running = wait_for(
      first, dir, [](const nlohmann::json& j) { return j.value("trials_stored", 0) >= 1; });
  ASSERT_GE(running.value("trials_stored", 0), 1) << "cancel after the first trial";
  ASSERT_EQ(running.value("state", ""), "RUNNING") << "the cancel must reach a running sweep:\n"
                                                   << read_file(running.value("log", ""));
  const auto cancel = run_gpudays("jobs cancel " + first + " --slurm-dir " + dir);
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  const nlohmann::json cancelled = wait_until_finished(first, dir);
  EXPECT_EQ(cancelled.value("state", ""), "CANCELLED");
  const auto before = trials(db, 1, 1);  // each row valid (rows are validated as read)
  for (const TrialRecord& t : before) {  // and none is what the cancel did to a trial
    EXPECT_NE(t.measured.status, TrialStatus::kCrash) << t.measured.message;
    EXPECT_NE(t.measured.status, TrialStatus::kKilled) << t.measured.message;
  }
  // Re-submitted with 3 timed steps per trial: a trial is stored under its configuration, not its
  // step count, so the same rows are reused and the trials left cost little on a loaded machine.
  std::string again = kSlow;
  again.replace(again.find("--steps 20"), std::string("--steps 20").size(), "--steps 3");
  const std::string second = submit("--gpus-per-node 1 --db " + db, dir, again, kSlowTrialTimeoutS);
  ASSERT_FALSE(second.empty());
  expect_sweep_stored(second, dir, db, 1, 1);
  const auto [run, reused] = trials_run_and_reused(job_status(second, dir).at("log"));
  int kept = 0;  // stored before the cancel and not killed: reused, not measured again
  for (const TrialRecord& t : before) kept += t.measured.status != TrialStatus::kKilled;
  EXPECT_GE(reused, kept);
  EXPECT_GE(kept, 1);
}

}  // namespace
}  // namespace gpudays
