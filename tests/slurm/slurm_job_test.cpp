// The Slurm library without a controller: the cluster file, the sbatch script, Slurm's time
// format, sinfo's partitions and the record of submitted jobs.
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/units.h"
#include "slurm/cluster_file.h"
#include "slurm/job_status.h"
#include "slurm/jobs_file.h"
#include "slurm/slurm_control.h"
#include "slurm/slurm_job.h"
#include "test_util.h"

namespace gpudays {
namespace {

const std::string kClusterFile = std::string(GPUDAYS_TEST_DATA_DIR) + "/slurm-cluster.toml";

TEST(SlurmClusterFile, LoadsPartitionsNetworkAndLauncher) {
  const SlurmCluster c = load_slurm_cluster(kClusterFile);
  EXPECT_EQ(c.name, "test-cluster");
  EXPECT_DOUBLE_EQ(c.inter_node_gb_per_s, 25.0);
  EXPECT_EQ(c.account, "proj42");
  ASSERT_EQ(c.partitions.size(), 2u);
  const SlurmPartition& a100 = c.partition("");  // the default
  EXPECT_EQ(a100.name, "a100");
  EXPECT_EQ(a100.gpu, "a100-80gb-sxm");
  EXPECT_EQ(a100.gpus_per_node, 4);
  EXPECT_EQ(a100.cpus_per_node, 64);
  EXPECT_DOUBLE_EQ(a100.memory_per_node_bytes, 512 * kGiB);
  EXPECT_DOUBLE_EQ(a100.max_time_s, 48 * 3600.0);
  EXPECT_EQ(c.partition("cpu").gpus_per_node, 0);
  EXPECT_EQ(c.launcher.setup, std::vector<std::string>{"module load cuda/12.4"});
}

TEST(SlurmClusterFile, UnknownPartitionNamesTheValidOnes) {
  const SlurmCluster c = load_slurm_cluster(kClusterFile);
  try {
    c.partition("h100");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown partition 'h100'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("a100"), std::string::npos);
  }
}

void expect_file_error(const std::string& contents, const std::string& needle) {
  const std::string path = test::write_temp_file("bad-cluster.toml", contents);
  try {
    load_slurm_cluster(path);
    FAIL() << "no error for: " << contents;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(SlurmClusterFile, MalformedFilesNameFileAndKey) {
  expect_file_error("name = \"x\"\n", "partitions");
  expect_file_error("[partitions.a]\ngpus_per_node = -1\n", "gpus_per_node");
  expect_file_error("[partitions.a]\ngpu = \"a100\"\n", "gpus_per_node");
  expect_file_error("[partitions.a]\ngpus_per_nod = 4\n", "gpus_per_nod");
  expect_file_error("inter_node_gb_per_s = \"fast\"\n[partitions.a]\n", "inter_node_gb_per_s");
  expect_file_error("default_partition = \"b\"\n[partitions.a]\n", "unknown partition 'b'");
  expect_file_error("[partitions.a\n", ":1:");
  const std::string long_name(300, 'p');
  expect_file_error("name = \"" + long_name + "\"\n[partitions.a]\n", "name: a name of 300 bytes");
  expect_file_error("[partitions." + long_name + "]\n", "a name of 300 bytes");
}

// A figure the file gives is held to its flag's bounds: a 0 is no count, a network near 0 planned
// step times of 300 digits, and a node cannot hold more GPUs than --gpus-per-node allows.
TEST(SlurmClusterFile, GivenFiguresHaveTheFlagsBounds) {
  expect_file_error("[partitions.a]\nnodes = 0\n", "nodes: 0 is not in [1, 4096]");
  expect_file_error("[partitions.a]\ncpus_per_node = 0\n", "cpus_per_node: 0 is not in [1,");
  expect_file_error("[partitions.a]\nmemory_per_node_gib = 0\n",
                    "memory_per_node_gib: 0 is not in [1,");
  expect_file_error("[partitions.a]\ngpu = \"a100\"\ngpus_per_node = 1000\n",
                    "gpus_per_node: 1000 is not in [1, 64]");
  expect_file_error("inter_node_gb_per_s = 0.0\n[partitions.a]\n",
                    "inter_node_gb_per_s: 0 is not in [0.01, 10000]");
  // A 0 limit is not "no limit" (the key left out is), nor is 1e300 hours a limit.
  expect_file_error("[partitions.a]\nmax_time_hours = 0\n",
                    "max_time_hours: 0 is not in [0.0166667, 100000]");
  expect_file_error("[partitions.a]\nmax_time_hours = 1e300\n",
                    "max_time_hours: 1e+300 is not in [0.0166667, 100000]");
}

SlurmJob two_by_two_job() {
  SlurmJob job;
  job.name = "gpudays-bench-x";
  job.partition = "a100";
  job.account = "proj42";
  job.nodes = 2;
  job.tasks_per_node = 4;
  job.gpus_per_node = 4;
  job.cpus_per_task = 16;
  job.memory_per_node_bytes = 256 * kGiB;
  job.time_limit_s = 90 * 60.0 + 1;
  job.log_dir = "/home/u/gpudays-slurm";
  job.setup = {"module load cuda"};
  job.environment = {{"OMP_NUM_THREADS", "16"}};
  job.command = {"/opt/gpudays", "train", "--run", "my run.toml"};
  return job;
}

TEST(SlurmJobScript, EveryTaskRunsTheCommandUnderSrun) {
  const std::string s = render_sbatch_script(two_by_two_job());
  for (const char* line : {"#SBATCH --nodes=2\n",
                           "#SBATCH --ntasks-per-node=4\n",
                           "#SBATCH --cpus-per-task=16\n",
                           "#SBATCH --gres=gpu:4\n",
                           "#SBATCH --mem=262144M\n",
                           "#SBATCH --time=0-01:31:00\n",
                           "#SBATCH --partition=a100\n",
                           "#SBATCH --account=proj42\n",
                           "#SBATCH --output=/home/u/gpudays-slurm/%x-%j.out\n",
                           "module load cuda\n",
                           "export OMP_NUM_THREADS=16\n",
                           "srun --nodes=2 --ntasks=8 --ntasks-per-node=4 --mpi=pmix "
                           "--kill-on-bad-exit=1 /opt/gpudays train --run 'my run.toml'\n"}) {
    EXPECT_NE(s.find(line), std::string::npos) << line << "\nin:\n" << s;
  }
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_EQ(s.find("--signal"), std::string::npos) << "no early SIGTERM unless asked";
}

TEST(SlurmJobScript, TermBeforeTheLimitGivesTheStepsTimeToCheckpoint) {
  SlurmJob job = two_by_two_job();
  job.term_before_limit_s = 120;
  const std::string s = render_sbatch_script(job);
  EXPECT_NE(s.find("#SBATCH --signal=TERM@120\n"), std::string::npos) << s;
}

TEST(SlurmJobScript, BatchShellRunsTheCommandOnce) {
  SlurmJob job = two_by_two_job();
  job.launch = JobLaunch::kBatchShell;
  const std::string s = render_sbatch_script(job);
  EXPECT_EQ(s.find("\nsrun "), std::string::npos) << s;
  EXPECT_NE(s.find("\n/opt/gpudays train --run 'my run.toml'\n"), std::string::npos) << s;
}

TEST(SlurmJobScript, RefusesAJobWithoutCommandOrTasks) {
  SlurmJob job = two_by_two_job();
  job.command.clear();
  EXPECT_THROW(render_sbatch_script(job), InputError);
  job = two_by_two_job();
  job.tasks_per_node = 0;
  EXPECT_THROW(render_sbatch_script(job), InputError);
}

TEST(SlurmTime, ParsesEverySlurmFormat) {
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("30"), 1800.0);
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("30:15"), 1815.0);
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("2:00:01"), 7201.0);
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("1-2"), 93600.0);
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("1-02:30"), 95400.0);
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("1-02:30:05"), 95405.0);
  EXPECT_DOUBLE_EQ(parse_slurm_time_s("infinite"), 0.0);
  for (const char* bad : {"", "abc", "1:2:3:4", "-5", "1-", "0", "1.5"}) {
    EXPECT_THROW(parse_slurm_time_s(bad), InputError) << bad;
  }
  EXPECT_EQ(format_slurm_time(95405.0), "1-02:31:00");  // rounded up, never shortened
  EXPECT_EQ(format_slurm_time(parse_slurm_time_s("2-00:00:00")), "2-00:00:00");
}

TEST(SlurmSinfo, ReadsPartitionsGpusMemoryAndLimits) {
  const auto parts = parse_sinfo_partitions(
      "gpu*|64|515000|gpu:a100:4(S:0-1)|2-00:00:00|8\n"
      "gpu*|32|256000|gpu:a100:4|2-00:00:00|2\n"
      "debug|2|4000|(null)|infinite|2\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "gpu");
  EXPECT_EQ(parts[0].gpus_per_node, 4);
  EXPECT_EQ(parts[0].cpus_per_node, 64);
  EXPECT_DOUBLE_EQ(parts[0].memory_per_node_bytes, 515000.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parts[0].max_time_s, 2 * 86400.0);
  EXPECT_EQ(parts[1].name, "debug");
  EXPECT_EQ(parts[1].gpus_per_node, 0);
  EXPECT_DOUBLE_EQ(parts[1].max_time_s, 0.0);
}

TEST(SlurmJobsFile, AppendsAndReadsBack) {
  const std::string path = test::write_temp_file("jobs.jsonl", "");
  SubmittedJob a{
      "17", "bench", "n", "2026-12-01T00:00:00Z", "/s", "/l", "/db", "", "m", "cpu", 2, 1, "debug"};
  SubmittedJob b = a;
  b.job_id = "18";
  b.kind = "train";
  b.db = "";
  b.run_dir = "/runs/m";
  append_submitted_job(path, a);
  append_submitted_job(path, b);
  const auto jobs = read_submitted_jobs(path);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0], a);
  EXPECT_EQ(jobs[1], b);
  // A record of an earlier version, without run_dir, still reads.
  const std::string older = test::write_temp_file(
      "old-jobs.jsonl",
      R"({"job_id":"17","kind":"bench","name":"n","submitted_at":"2026-12-01T00:00:00Z",)"
      R"("script":"/s","log":"/l","db":"/db","model":"m","gpu":"cpu","nodes":2,)"
      R"("tasks_per_node":1,"partition":"debug"})"
      "\n");
  EXPECT_EQ(read_submitted_jobs(older).at(0), a);
  const std::string bad = test::write_temp_file("bad-jobs.jsonl", "{\"job_id\": 1}\n");
  EXPECT_THROW(read_submitted_jobs(bad), InputError);
}

// A sweep's job creates its database when it starts; until its first write the file is empty.
// Listed then (`gpudays jobs` right after submitting, on a loaded machine), it has stored nothing
// yet: the listing says 0 trials instead of failing with "no results database".
TEST(SlurmJobStatus, ADatabaseNotWrittenYetHoldsNoTrialYet) {
  const std::string db = test::write_temp_file("starting.db", "");
  SubmittedJob job{
      "21", "bench", "n", "2026-12-01T00:00:00Z", "/s", "/l", db, "", "m", "cpu", 1, 2, "debug"};
  std::vector<JobStatus> statuses;
  ASSERT_NO_THROW(statuses = job_statuses({job}));
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].trials, 0);
  EXPECT_EQ(job_progress(statuses[0]), "0 trials");
  // A file that is not a results database is still an error, named.
  const std::string other = test::write_temp_file("not-a.db", "hello");
  job.db = other;
  EXPECT_THROW(job_statuses({job}), InputError);
}

}  // namespace
}  // namespace gpudays
