// The launcher: the argv of a launch (one rank plain; several under mpirun with the options each
// host and device needs; a job step under srun). The rendezvous: the ranks and the store read from
// each launcher's variables (set and restored here), and one-line errors for inconsistent ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "distributed/launcher.h"

namespace gpudays {
namespace {

using Argv = std::vector<std::string>;

LaunchHost host(int64_t cores) {
  return {.cores = cores, .root = false, .omp_threads_set = false, .mpirun = "/usr/bin/mpirun"};
}

LaunchOptions ranks_on(int64_t ranks, RankDevice device) {
  return {.ranks = ranks,
          .device = device,
          .threads_per_rank = 0,
          .launcher = Launcher::kMpirun,
          .srun = {},
          .program = {"/bin/gpudays", "trial"}};
}

TEST(Launcher, OneRankIsTheProgramItself) {
  EXPECT_EQ(launch_argv(ranks_on(1, RankDevice::kCpu), host(8)), (Argv{"/bin/gpudays", "trial"}));
  LaunchHost without_mpirun = host(8);
  without_mpirun.mpirun = "";
  EXPECT_EQ(launch_argv(ranks_on(1, RankDevice::kCuda), without_mpirun),
            (Argv{"/bin/gpudays", "trial"}));
}

TEST(Launcher, CpuRanksShareTheCoresUnderMpirun) {
  EXPECT_EQ(launch_argv(ranks_on(2, RankDevice::kCpu), host(8)),
            (Argv{"/usr/bin/mpirun",
                  "-np",
                  "2",
                  "--oversubscribe",
                  "-x",
                  "OMP_NUM_THREADS=4",
                  "/bin/gpudays",
                  "trial"}));
  // More ranks than cores: one thread each.
  EXPECT_EQ(launch_argv(ranks_on(4, RankDevice::kCpu), host(2))[5], "OMP_NUM_THREADS=1");
}

TEST(Launcher, ThreadsAreLeftToAnOmpNumThreadsAlreadySetUnlessGiven) {
  LaunchHost h = host(8);
  h.omp_threads_set = true;
  EXPECT_EQ(launch_argv(ranks_on(2, RankDevice::kCpu), h),
            (Argv{"/usr/bin/mpirun", "-np", "2", "--oversubscribe", "/bin/gpudays", "trial"}));
  LaunchOptions three = ranks_on(2, RankDevice::kCpu);
  three.threads_per_rank = 3;
  EXPECT_EQ(launch_argv(three, h)[5], "OMP_NUM_THREADS=3");
}

TEST(Launcher, CudaRanksOversubscribeOnlyBeyondTheCoresAndRootIsAllowed) {
  EXPECT_EQ(launch_argv(ranks_on(4, RankDevice::kCuda), host(8)),
            (Argv{"/usr/bin/mpirun", "-np", "4", "/bin/gpudays", "trial"}));
  LaunchHost root = host(2);
  root.root = true;
  EXPECT_EQ(launch_argv(ranks_on(4, RankDevice::kCuda), root),
            (Argv{"/usr/bin/mpirun",
                  "-np",
                  "4",
                  "--allow-run-as-root",
                  "--oversubscribe",
                  "/bin/gpudays",
                  "trial"}));
}

TEST(Launcher, RejectsWhatItCannotLaunch) {
  LaunchHost without_mpirun = host(8);
  without_mpirun.mpirun = "";
  try {
    launch_argv(ranks_on(2, RankDevice::kCpu), without_mpirun);
    FAIL() << "no launcher, yet it launched";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("MPI launcher"), std::string::npos) << e.what();
  }
  EXPECT_THROW(launch_argv(ranks_on(0, RankDevice::kCpu), host(8)), InputError);
  LaunchOptions negative = ranks_on(2, RankDevice::kCpu);
  negative.threads_per_rank = -1;
  EXPECT_THROW(launch_argv(negative, host(8)), InputError);
  LaunchOptions nothing = ranks_on(1, RankDevice::kCpu);
  nothing.program.clear();
  EXPECT_THROW(launch_argv(nothing, host(8)), InputError);
}

TEST(Launcher, SrunStartsAJobStepOnEveryTaskOneRankToo) {
  LaunchOptions step = ranks_on(8, RankDevice::kCuda);
  step.launcher = Launcher::kSrun;
  step.srun = {.nodes = 2, .mpi = "pmix", .extra_args = {"--exclusive"}};
  LaunchHost without_mpirun = host(8);
  without_mpirun.mpirun = "";  // srun needs no mpirun
  EXPECT_EQ(launch_argv(step, without_mpirun),
            (Argv{"srun",
                  "--nodes=2",
                  "--ntasks=8",
                  "--ntasks-per-node=4",
                  "--mpi=pmix",
                  "--exclusive",
                  "--kill-on-bad-exit=1",
                  "/bin/gpudays",
                  "trial"}));
  LaunchOptions one = ranks_on(1, RankDevice::kCpu);
  one.launcher = Launcher::kSrun;
  one.srun.mpi = "";  // Slurm's MpiDefault; CPU ranks get no -x OMP_NUM_THREADS (the script's)
  EXPECT_EQ(launch_argv(one, host(8)),
            (Argv{"srun",
                  "--nodes=1",
                  "--ntasks=1",
                  "--ntasks-per-node=1",
                  "--kill-on-bad-exit=1",
                  "/bin/gpudays",
                  "trial"}));
  step.srun.nodes = 3;
  EXPECT_THROW(launch_argv(step, host(8)), InputError);  // 8 ranks over 3 nodes
}

TEST(Launcher, ThisHostAndThisProgram) {
  const LaunchHost h = this_host();
  EXPECT_GE(h.cores, 1);
  EXPECT_EQ(h.omp_threads_set, std::getenv("OMP_NUM_THREADS") != nullptr);
#ifdef GPUDAYS_MPIEXEC
  EXPECT_EQ(h.mpirun, GPUDAYS_MPIEXEC);
#else
  EXPECT_EQ(h.mpirun, "");
#endif
  EXPECT_EQ(self_path(), GPUDAYS_TEST_BINARY);
}

// Unsets every launcher variable for the test's lifetime, then restores them (this binary also
// runs under mpirun, where Open MPI's are set).
class LauncherEnvironment {
 public:
  LauncherEnvironment() {
    for (const char* name : kNames) {
      const char* value = std::getenv(name);
      saved_.push_back(value == nullptr ? std::nullopt : std::optional<std::string>(value));
      unsetenv(name);
    }
  }
  LauncherEnvironment(const LauncherEnvironment&) = delete;
  LauncherEnvironment& operator=(const LauncherEnvironment&) = delete;
  ~LauncherEnvironment() {
    for (size_t i = 0; i < std::size(kNames); ++i) {
      if (saved_[i]) {
        setenv(kNames[i], saved_[i]->c_str(), /*overwrite=*/1);
      } else {
        unsetenv(kNames[i]);
      }
    }
  }
  void set(const char* name, const char* value) { setenv(name, value, /*overwrite=*/1); }

 private:
  static constexpr const char* kNames[] = {"WORLD_SIZE",
                                           "RANK",
                                           "LOCAL_RANK",
                                           "LOCAL_WORLD_SIZE",
                                           "MASTER_ADDR",
                                           "MASTER_PORT",
                                           "TORCHELASTIC_USE_AGENT_STORE",
                                           "TORCHELASTIC_RESTART_COUNT",
                                           "GPUDAYS_STORE_FILE",
                                           "OMPI_COMM_WORLD_SIZE",
                                           "OMPI_COMM_WORLD_RANK",
                                           "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "OMPI_COMM_WORLD_LOCAL_SIZE",
                                           "OMPI_MCA_ess_base_jobid",
                                           "PMI_SIZE",
                                           "PMI_RANK",
                                           "MPI_LOCALRANKID",
                                           "MPI_LOCALNRANKS",
                                           "PMIX_SIZE",
                                           "PMIX_RANK",
                                           "PMIX_NAMESPACE",
                                           "SLURM_STEP_NUM_TASKS",
                                           "SLURM_PROCID",
                                           "SLURM_LOCALID",
                                           "SLURM_STEP_NODELIST",
                                           "SLURM_JOB_NODELIST",
                                           "SLURM_JOB_ID"};
  std::vector<std::optional<std::string>> saved_;
};

TEST(RankEnvironment, NoLauncherIsOneRank) {
  LauncherEnvironment env;
  EXPECT_EQ(rank_environment(), (RankEnvironment{.rank = 0, .world_size = 1, .local_rank = 0}));
  EXPECT_FALSE(launched_with_several_ranks());
  EXPECT_EQ(local_rank(), 0);
  // A batch script's shell: Slurm's allocation, but no step of several tasks.
  env.set("SLURM_PROCID", "0");
  EXPECT_FALSE(launched_with_several_ranks());
}

TEST(RankEnvironment, EachLauncherIsRead) {
  struct Case {
    const char* size;
    const char* rank;
    const char* local;  // nullptr: the launcher sets none
  };
  for (const Case& c :
       {Case{"WORLD_SIZE", "RANK", "LOCAL_RANK"},
        Case{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
        Case{"PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"},
        Case{"PMIX_SIZE", "PMIX_RANK", nullptr},
        Case{"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID"}}) {
    LauncherEnvironment env;
    env.set(c.size, "8");
    env.set(c.rank, "5");
    if (c.local != nullptr) env.set(c.local, "1");
    EXPECT_EQ(rank_environment(),
              (RankEnvironment{.rank = 5, .world_size = 8, .local_rank = c.local ? 1 : 0}))
        << c.size;
    EXPECT_TRUE(launched_with_several_ranks()) << c.size;
    EXPECT_EQ(local_rank(), c.local ? 1 : 0) << c.size;
  }
}

TEST(RankEnvironment, TheFirstLauncherSetAnswers) {
  LauncherEnvironment env;
  // mpirun inside a Slurm step: Open MPI's variables, not the step's.
  env.set("SLURM_STEP_NUM_TASKS", "4");
  env.set("SLURM_PROCID", "3");
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  env.set("OMPI_COMM_WORLD_RANK", "1");
  EXPECT_EQ(rank_environment(), (RankEnvironment{.rank = 1, .world_size = 2, .local_rank = 0}));
}

TEST(RankEnvironment, MalformedVariablesAreErrors) {
  LauncherEnvironment env;
  env.set("OMPI_COMM_WORLD_SIZE", "two");
  EXPECT_THROW(rank_environment(), InputError);
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  env.set("OMPI_COMM_WORLD_RANK", "2");
  EXPECT_THROW(rank_environment(), InputError);  // rank 2 of 2
  env.set("OMPI_COMM_WORLD_RANK", "-1");
  EXPECT_THROW(rank_environment(), InputError);
}

TEST(Rendezvous, TorchrunsVariablesNameATcpStore) {
  LauncherEnvironment env;
  env.set("WORLD_SIZE", "4");
  env.set("RANK", "2");
  env.set("LOCAL_RANK", "0");
  env.set("MASTER_ADDR", "node7");
  env.set("MASTER_PORT", "29500");
  Rendezvous r = rendezvous_from_environment();
  EXPECT_EQ(r.launcher, "torchrun");
  EXPECT_EQ(r.ranks, (RankEnvironment{.rank = 2, .world_size = 4, .local_rank = 0}));
  EXPECT_EQ(r.store.host, "node7");
  EXPECT_EQ(r.store.port, 29500);
  EXPECT_FALSE(r.store.served_by_launcher);
  EXPECT_EQ(r.store.key_prefix, "gpudays/attempt_0/");
  // torchrun's agent already serves the store on MASTER_PORT: rank 0 must not serve another.
  env.set("TORCHELASTIC_USE_AGENT_STORE", "True");
  env.set("TORCHELASTIC_RESTART_COUNT", "3");
  r = rendezvous_from_environment();
  EXPECT_TRUE(r.store.served_by_launcher);
  EXPECT_EQ(r.store.key_prefix, "gpudays/attempt_3/");
}

TEST(Rendezvous, SlurmMeetsOnTheFirstHostOfTheStep) {
  LauncherEnvironment env;
  env.set("SLURM_STEP_NUM_TASKS", "8");
  env.set("SLURM_PROCID", "5");
  env.set("SLURM_LOCALID", "1");
  env.set("SLURM_JOB_NODELIST", "gpu[03-05,09],cpu1");
  env.set("SLURM_JOB_ID", "123456");
  const Rendezvous r = rendezvous_from_environment();
  EXPECT_EQ(r.launcher, "slurm");
  EXPECT_EQ(r.ranks, (RankEnvironment{.rank = 5, .world_size = 8, .local_rank = 1}));
  EXPECT_EQ(r.store, (StoreAddress{.host = "gpu03", .port = 20000 + 123456 % 20000}));
  env.set("MASTER_ADDR", "login2");  // the user's address wins
  env.set("MASTER_PORT", "4000");
  EXPECT_EQ(rendezvous_from_environment().store, (StoreAddress{.host = "login2", .port = 4000}));
}

TEST(Rendezvous, OpenMpiOnOneNodeMeetsAtAFileNamedByTheJob) {
  LauncherEnvironment env;
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  env.set("OMPI_COMM_WORLD_RANK", "1");
  env.set("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  env.set("OMPI_MCA_ess_base_jobid", "77");
  EXPECT_EQ(rendezvous_from_environment().store.file, "/tmp/gpudays-store-openmpi-77");
  env.set("GPUDAYS_STORE_FILE", "/shared/run1");
  EXPECT_EQ(rendezvous_from_environment().store, (StoreAddress{.file = "/shared/run1"}));
  env.set("OMPI_COMM_WORLD_LOCAL_SIZE", "1");  // several nodes: a file under /tmp is not shared
  unsetenv("GPUDAYS_STORE_FILE");
  EXPECT_THROW(rendezvous_from_environment(), InputError);
  env.set("MASTER_ADDR", "node1");
  env.set("MASTER_PORT", "29500");
  EXPECT_EQ(rendezvous_from_environment().store.host, "node1");
}

TEST(Rendezvous, OneRankNeedsNoStore) {
  LauncherEnvironment env;
  EXPECT_EQ(rendezvous_from_environment(), Rendezvous{});
  env.set("WORLD_SIZE", "1");
  env.set("RANK", "0");
  EXPECT_EQ(rendezvous_from_environment().store, StoreAddress{});
}

TEST(Rendezvous, InconsistentVariablesAreOneLineErrors) {
  const auto message = [] {
    try {
      rendezvous_from_environment();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  LauncherEnvironment env;
  env.set("RANK", "1");
  EXPECT_EQ(message(), "RANK is set but WORLD_SIZE is not: set both (torchrun sets both)");
  env.set("WORLD_SIZE", "2");
  env.set("MASTER_ADDR", "node1");
  EXPECT_EQ(message(),
            "MASTER_ADDR is set but MASTER_PORT is not: set both, rank 0's host and a free port");
  env.set("MASTER_PORT", "70000");
  EXPECT_NE(message().find("MASTER_PORT='70000'"), std::string::npos);
  env.set("MASTER_PORT", "29500");
  env.set("LOCAL_RANK", "2");
  EXPECT_EQ(message(), "LOCAL_RANK=2 is not a rank among WORLD_SIZE=2");
  unsetenv("RANK");
  unsetenv("LOCAL_RANK");
  env.set("OMPI_COMM_WORLD_SIZE", "2");  // Open MPI's size without its rank
  unsetenv("WORLD_SIZE");
  EXPECT_EQ(message(), "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not");
}

TEST(Rendezvous, FirstSlurmHost) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[03-05,09],cpu1"), "gpu03");
  EXPECT_EQ(first_slurm_host("a[7]-ib,b[1-2]"), "a7-ib");
  EXPECT_EQ(first_slurm_host("cpu1,gpu[1-2]"), "cpu1");
  EXPECT_THROW(first_slurm_host(""), InputError);
  EXPECT_THROW(first_slurm_host("gpu[1-2"), InputError);
  EXPECT_THROW(first_slurm_host("[1-2]"), InputError);
}

}  // namespace
}  // namespace gpudays
