// Where a Slurm job runs, without a controller: a partition's constraint (how a site with several
// GPU types in one partition selects one), nodelist, reservation, further #SBATCH lines and the
// Slurm partition it submits to, from the cluster file and the submitting commands' flags; the
// links of its nodes (an NVLink bridge, peer-to-peer) and the script's NCCL_P2P_DISABLE default.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"
#include "process_dir.h"
#include "slurm/cluster_file.h"
#include "slurm/slurm_job.h"
#include "slurm_test_util.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;
using test::ScopedEnv;

const std::string kMixed = R"(name = "mixed"
default_partition = "gpu-3090"

[partitions.gpu-3090]
slurm_partition = "gpu"
gpu = "rtx-3090"
gpus_per_node = 2
cpus_per_node = 16
constraint = "geforce3090"
nodelist = "gpu[01-04]"
reservation = "course"
sbatch_lines = ["--exclusive", "--mail-type=END"]
pair_bridge = true

[partitions.gpu-4090]
slurm_partition = "gpu"
gpu = "rtx-4090"
gpus_per_node = 2
cpus_per_node = 16
constraint = "geforce4090"
)";

std::string mixed_file() {
  return test::write_temp_file("mixed-cluster.toml", kMixed);
}

TEST(SlurmPlacement, ThePartitionSaysWhereItsJobsRun) {
  const SlurmCluster c = load_slurm_cluster(mixed_file());
  const SlurmPartition& p = c.partition("gpu-3090");
  EXPECT_EQ(p.sbatch_name(), "gpu");
  EXPECT_EQ(p.constraint, "geforce3090");
  EXPECT_EQ(p.nodelist, "gpu[01-04]");
  EXPECT_EQ(p.reservation, "course");
  EXPECT_EQ(p.sbatch_lines, (std::vector<std::string>{"--exclusive", "--mail-type=END"}));
  EXPECT_EQ(p.links, (LinkSettings{.pair_bridge = true}));
  EXPECT_EQ(c.partition("gpu-4090").links, LinkSettings{});
  EXPECT_EQ(load_slurm_cluster(std::string(GPUDAYS_TEST_DATA_DIR) + "/slurm-cluster.toml")
                .partition("a100")
                .sbatch_name(),
            "a100")
      << "without slurm_partition, the table's name";
}

void expect_key_error(const std::string& from, const std::string& to, const std::string& needle) {
  std::string text = kMixed;
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  const std::string path =
      test::write_temp_file("bad-placement.toml", text.replace(at, from.size(), to));
  const auto r = run_gpudays("plan --model pythia-160m --cluster " + path);
  EXPECT_EQ(r.exit_code, 2) << to << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(path + " [partitions.gpu-3090]: " + needle), std::string::npos) << r.err;
}

TEST(SlurmPlacement, BadValuesInTheClusterFileNameFileAndKey) {
  expect_key_error("constraint = \"geforce3090\"", "constraint = \"\"", "constraint: empty");
  expect_key_error("nodelist = \"gpu[01-04]\"", "nodelist = \"gpu01 gpu02\"", "nodelist: 'gpu01");
  expect_key_error("reservation = \"course\"", "reservation = 3", "reservation: must be a string");
  expect_key_error(
      "\"--exclusive\"", "\"--exclusive\\nrm -rf ~\"", "sbatch_lines: '--exclusive\\nrm");
  expect_key_error(
      "\"--exclusive\"", "\"exclusive\"", "sbatch_lines: 'exclusive' is not an sbatch");
  expect_key_error(
      "\"--exclusive\"", "\"--time=10\"", "sbatch_lines: '--time=10': gpudays writes --time");
  expect_key_error("pair_bridge = true", "pair_bridge = \"yes\"", "pair_bridge: must be true");
  expect_key_error("pair_bridge = true", "peer_to_peer = 1", "peer_to_peer: must be true");
}

TEST(SlurmPlacement, ScriptsCarryTheKeysAndTheFlagsWin) {
  const ScopedEnv no_slurm("SLURM_CONF", "/nonexistent/slurm.conf");
  const std::string dir = test::process_temp_dir().fresh_dir("placement");
  const std::string bench =
      "bench --model pythia-160m --gpu rtx-3090 --gpus-per-node 2 --cluster " + mixed_file() +
      " --slurm --dry-run --slurm-dir " + dir;
  const auto r = run_gpudays(bench);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"#SBATCH --partition=gpu\n",
                           "#SBATCH --reservation=course\n",
                           "#SBATCH --nodelist='gpu[01-04]'\n",
                           "#SBATCH --constraint=geforce3090\n",
                           "#SBATCH --exclusive\n",
                           "#SBATCH --mail-type=END\n",
                           " --pair-bridge on"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
  }
  EXPECT_EQ(r.out.find("NCCL_P2P_DISABLE"), std::string::npos) << "the 3090 has peer-to-peer";
  const auto flags = run_gpudays(bench +
                                 " --constraint 'a100&ib' --nodelist gpu07 --reservation exam "
                                 "--sbatch-line=--comment=ours --pair-bridge off");
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  for (const char* line : {"#SBATCH --constraint='a100&ib'\n",
                           "#SBATCH --nodelist=gpu07\n",
                           "#SBATCH --reservation=exam\n",
                           "#SBATCH --exclusive\n",
                           "#SBATCH --comment=ours\n",
                           " --pair-bridge off"}) {
    EXPECT_NE(flags.out.find(line), std::string::npos) << line << " in\n" << flags.out;
  }
}

TEST(SlurmPlacement, JobsOfGpusWithoutPeerToPeerDisableItUnlessSet) {
  const ScopedEnv no_slurm("SLURM_CONF", "/nonexistent/slurm.conf");
  const std::string dir = test::process_temp_dir().fresh_dir("p2p");
  const std::string bench =
      "bench --model pythia-160m --gpu rtx-4090 --gpus-per-node 2 --cluster " + mixed_file() +
      " --partition gpu-4090 --slurm --dry-run --slurm-dir " + dir;
  const auto r = run_gpudays(bench);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#SBATCH --constraint=geforce4090\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export NCCL_P2P_DISABLE=\"${NCCL_P2P_DISABLE:-1}\""), std::string::npos)
      << r.out;
  const auto forced = run_gpudays(bench + " --peer-to-peer on");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.out.find("NCCL_P2P_DISABLE"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find(" --peer-to-peer on"), std::string::npos) << forced.out;
}

TEST(SlurmPlacement, BadFlagsAreOneLineErrorsNamingTheFlag) {
  const std::string dir = test::process_temp_dir().fresh_dir("bad-flags");
  const std::string bench =
      "bench --model pythia-160m --gpu rtx-3090 --gpus-per-node 2 --cluster " + mixed_file() +
      " --slurm --dry-run --slurm-dir " + dir;
  for (const auto& [flag, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--constraint ''", "--constraint: empty"},
           {"--nodelist 'a b'", "--nodelist: 'a b' has a space"},
           {"--reservation ''", "--reservation: empty"},
           {"--sbatch-line=\"$(printf -- '--exclusive\\nhostname')\"",
            "--sbatch-line: '--exclusive\\nhostname' has a newline"},
           {"--sbatch-line=-N2", "'-N2' is not an sbatch long option"},
           {"--sbatch-line=--partition=debug", "gpudays writes --partition itself"},
           {"--pair-bridge yes", "--pair-bridge"}}) {
    const auto r = run_gpudays(bench + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << flag << ": " << r.err;
  }
}

TEST(SlurmPlacement, ScriptValuesAreCheckedAgainWhenWritten) {
  SlurmJob job;
  job.command = {"/opt/gpudays", "train"};
  job.constraint = "a100\n#SBATCH --time=9999";
  EXPECT_THROW(render_sbatch_script(job), InputError);
  job.constraint = "";
  job.sbatch_lines = {"--gres=gpu:8"};
  EXPECT_THROW(render_sbatch_script(job), InputError);
  EXPECT_EQ(sbatch_line_problem("--exclusive"), "");
  EXPECT_EQ(sbatch_line_problem("--mail-type END"), "");
  EXPECT_NE(sbatch_line_problem("#SBATCH --exclusive"), "");
  EXPECT_NE(sbatch_line_problem("--"), "");
  EXPECT_EQ(sbatch_value_problem("a100|h100"), "");
}

}  // namespace
}  // namespace gpudays
