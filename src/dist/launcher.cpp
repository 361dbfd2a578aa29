// The launch command line (plain or mpirun), this program's path, the rank environment launchers
// set, and the communicator a launch implies. GPUDAYS_MPIEXEC, the MPI launcher CMake found, is
// defined for this file by src/dist/CMakeLists.txt.
#include "dist/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "dist/communicator.h"

namespace gpudays {
namespace {

// mpirun -np N [--allow-run-as-root] [--oversubscribe] [-x OMP_NUM_THREADS=k]
std::vector<std::string> mpirun_prefix(const LaunchOptions& options, const LaunchHost& host) {
  if (host.mpirun.empty()) {
    throw EnvironmentError(fmt::format(  // a missing tool: exit code 1
        "{} ranks need an MPI launcher (mpirun), and none was found when gpudays was built: "
        "install openmpi-bin and libopenmpi-dev, then rebuild",
        options.ranks));
  }
  const bool cpu = options.device == RankDevice::kCpu;
  std::vector<std::string> argv = {host.mpirun, "-np", std::to_string(options.ranks)};
  if (host.root) argv.push_back("--allow-run-as-root");
  if (cpu || options.ranks > host.cores) argv.push_back("--oversubscribe");
  if (cpu && (options.threads_per_rank > 0 || !host.omp_threads_set)) {
    const int64_t threads = options.threads_per_rank > 0
                                ? options.threads_per_rank
                                : std::max<int64_t>(1, host.cores / options.ranks);
    argv.insert(argv.end(), {"-x", fmt::format("OMP_NUM_THREADS={}", threads)});
  }
  return argv;
}

// The value of `name` as a non-negative int, or nullopt when unset.
std::optional<int> int_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || errno != 0 || n < 0 || n > 1 << 30) {
    throw InputError(
        fmt::format("{}='{}' set by the launcher is not a rank or a count", name, value));
  }
  return static_cast<int>(n);
}

// Each launcher's variables: its ranks, this process's rank, its rank on this node.
struct LauncherVariables {
  const char* size;
  const char* rank;
  const char* local_rank;  // nullptr: none
};
// SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: a batch script's own shell sees the allocation's task
// count but is one process; srun sets the step's.
constexpr LauncherVariables kLaunchers[] = {
    {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"},
    {"PMIX_SIZE", "PMIX_RANK", nullptr},
    {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID"},
};

}  // namespace

LaunchHost this_host() {
  LaunchHost host;
  host.cores = std::max(1u, std::thread::hardware_concurrency());
  host.root = geteuid() == 0;
  host.omp_threads_set = std::getenv("OMP_NUM_THREADS") != nullptr;
#ifdef GPUDAYS_MPIEXEC
  host.mpirun = GPUDAYS_MPIEXEC;
#endif
  return host;
}

std::vector<std::string> launch_argv(const LaunchOptions& options, const LaunchHost& host) {
  if (options.ranks < 1) throw InputError(fmt::format("{} ranks: at least 1", options.ranks));
  if (options.threads_per_rank < 0) {
    throw InputError(
        fmt::format("{} threads per rank: 0 (the default) or more", options.threads_per_rank));
  }
  if (options.program.empty()) throw InputError("nothing to launch: the program's argv is empty");
  std::vector<std::string> argv;
  if (options.ranks > 1) {
    switch (options.launcher) {
      case Launcher::kMpirun:
        argv = mpirun_prefix(options, host);
        break;
    }
  }
  argv.insert(argv.end(), options.program.begin(), options.program.end());
  return argv;
}

std::string self_path() {
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path (/proc/self/exe)");
  return std::string(self, n);
}

RankEnvironment rank_environment() {
  for (const LauncherVariables& v : kLaunchers) {
    const std::optional<int> size = int_variable(v.size);
    if (!size) continue;
    RankEnvironment env;
    env.world_size = std::max(1, *size);
    env.rank = int_variable(v.rank).value_or(0);
    env.local_rank = v.local_rank == nullptr ? 0 : int_variable(v.local_rank).value_or(0);
    if (env.rank >= env.world_size) {
      throw InputError(
          fmt::format("{}={} is not a rank among {}={}", v.rank, env.rank, v.size, env.world_size));
    }
    return env;
  }
  return RankEnvironment{};
}

bool launched_with_several_ranks() {
  return rank_environment().world_size > 1;
}

int local_rank() {
  return rank_environment().local_rank;
}

std::unique_ptr<Communicator> make_communicator(RankDevice device, int cuda_device) {
  if (!launched_with_several_ranks()) return make_single_process_communicator();
  if (device == RankDevice::kCpu) return make_mpi_communicator();
  // The MPI bootstrap only carries NCCL's id from rank 0 (MPI itself lives until exit).
  const std::unique_ptr<Communicator> bootstrap = make_mpi_communicator();
  return make_nccl_communicator(*bootstrap, cuda_device);
}

}  // namespace gpudays
