// The environment gpudays gives the ranks it launches (distributed/launcher.h): NCCL_P2P_DISABLE=1
// for GPUs without peer-to-peer unless the user set it, carried by each launcher (mpirun -x, srun
// --export, env for one process), in a benchmark's trial command and a job script's defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/error.h"
#include "distributed/launcher.h"
#include "slurm/slurm_job.h"
#include "sweep/bench_job.h"
#include "test_util.h"

namespace gpudays {
namespace {

using Argv = std::vector<std::string>;

EnvironmentLookup environment(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

const std::vector<EnvironmentVariable> kP2pOff = {{"NCCL_P2P_DISABLE", "1"}};

TEST(CollectiveEnvironment, GpusWithoutPeerToPeerGetNcclP2pDisable) {
  EXPECT_EQ(collective_environment(/*peer_to_peer=*/false, environment({})), kP2pOff);
  EXPECT_TRUE(collective_environment(/*peer_to_peer=*/true, environment({})).empty());
  EXPECT_EQ(collective_environment(/*peer_to_peer=*/false, nothing_set), kP2pOff);
}

TEST(CollectiveEnvironment, TheUsersValueWins) {
  for (const char* value : {"0", "1", ""}) {
    EXPECT_TRUE(
        collective_environment(/*peer_to_peer=*/false, environment({{"NCCL_P2P_DISABLE", value}}))
            .empty())
        << "NCCL_P2P_DISABLE='" << value << "' is the user's";
  }
  EXPECT_EQ(collective_environment(/*peer_to_peer=*/false, environment({{"NCCL_DEBUG", "INFO"}})),
            kP2pOff);
}

LaunchOptions two_cuda_ranks(Launcher launcher) {
  LaunchOptions o;
  o.ranks = 2;
  o.device = RankDevice::kCuda;
  o.launcher = launcher;
  o.environment = kP2pOff;
  o.program = {"/bin/gpudays", "trial"};
  return o;
}

TEST(CollectiveEnvironment, EveryLauncherCarriesItToTheRanks) {
  const LaunchHost h{.cores = 8, .root = false, .omp_threads_set = false, .mpirun = "mpirun"};
  EXPECT_EQ(launch_argv(two_cuda_ranks(Launcher::kMpirun), h),
            (Argv{"mpirun", "-np", "2", "-x", "NCCL_P2P_DISABLE=1", "/bin/gpudays", "trial"}));
  EXPECT_EQ(launch_argv(two_cuda_ranks(Launcher::kSrun), h),
            (Argv{"srun",
                  "--nodes=1",
                  "--ntasks=2",
                  "--ntasks-per-node=2",
                  "--mpi=pmix",
                  "--export=ALL,NCCL_P2P_DISABLE=1",
                  "--kill-on-bad-exit=1",
                  "/bin/gpudays",
                  "trial"}));
  LaunchOptions one = two_cuda_ranks(Launcher::kMpirun);
  one.ranks = 1;
  EXPECT_EQ(launch_argv(one, h), (Argv{"env", "NCCL_P2P_DISABLE=1", "/bin/gpudays", "trial"}));
  one.environment = {{"BAD NAME", "1"}};
  EXPECT_THROW(launch_argv(one, h), InputError);
  LaunchOptions comma = two_cuda_ranks(Launcher::kSrun);
  comma.environment = {{"NCCL_P2P_DISABLE", "1,2"}};
  EXPECT_THROW(launch_argv(comma, h), InputError) << "srun --export would split it";
}

bool contains(const Argv& argv, const std::string& item) {
  return std::find(argv.begin(), argv.end(), item) != argv.end();
}

TEST(CollectiveEnvironment, BenchTrialsOnRtx4090sRunWithoutPeerToPeer) {
  if (this_host().mpirun.empty()) GTEST_SKIP() << "no mpirun: two ranks cannot launch";
  if (std::getenv("NCCL_P2P_DISABLE") != nullptr) GTEST_SKIP() << "NCCL_P2P_DISABLE is set here";
  BenchRequest r;
  r.gpu = "rtx-4090";
  const Cluster pair{{1, 2}, &test::catalog().gpu("rtx-4090")};
  EXPECT_TRUE(contains(trial_command("", r, pair), "NCCL_P2P_DISABLE=1"));
  r.links.peer_to_peer = true;  // --peer-to-peer on
  EXPECT_FALSE(contains(trial_command("", r, pair), "NCCL_P2P_DISABLE=1"));
  const Cluster rtx3090{{1, 2}, &test::catalog().gpu("rtx-3090")};
  r.links = {};
  EXPECT_FALSE(contains(trial_command("", r, rtx3090), "NCCL_P2P_DISABLE=1"));
  r.links.peer_to_peer = false;  // --peer-to-peer off forces it
  EXPECT_TRUE(contains(trial_command("", r, rtx3090), "NCCL_P2P_DISABLE=1"));
  const Cluster one{{1, 1}, &test::catalog().gpu("rtx-4090")};
  EXPECT_FALSE(contains(trial_command("", BenchRequest{}, one), "NCCL_P2P_DISABLE=1"))
      << "one rank has no peers";
}

TEST(CollectiveEnvironment, AJobScriptSetsItOnlyWhereUnset) {
  SlurmJob job;
  job.command = {"/opt/gpudays", "train"};
  job.environment_defaults = {{"NCCL_P2P_DISABLE", "1"}};
  const std::string s = render_sbatch_script(job);
  EXPECT_NE(s.find("export NCCL_P2P_DISABLE=\"${NCCL_P2P_DISABLE:-1}\""), std::string::npos) << s;
  job.environment_defaults = {{"NCCL_P2P_DISABLE", "$(rm -rf /)"}};
  EXPECT_THROW(render_sbatch_script(job), InputError);
}

}  // namespace
}  // namespace gpudays
