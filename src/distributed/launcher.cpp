// The launch command line (plain, mpirun or srun) and this program's path. GPUDAYS_MPIEXEC, the
// mpirun CMake found, is defined for this file by src/distributed/CMakeLists.txt.
#include "distributed/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"

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

// srun --nodes=K --ntasks=R --ntasks-per-node=R/K [--mpi=M] [extra] --kill-on-bad-exit=1
std::vector<std::string> srun_prefix(const LaunchOptions& options) {
  const SrunOptions& srun = options.srun;
  if (srun.nodes < 1 || options.ranks % srun.nodes != 0) {
    throw InputError(fmt::format(
        "{} ranks do not spread evenly over {} nodes (srun)", options.ranks, srun.nodes));
  }
  std::vector<std::string> argv = {"srun",
                                   fmt::format("--nodes={}", srun.nodes),
                                   fmt::format("--ntasks={}", options.ranks),
                                   fmt::format("--ntasks-per-node={}", options.ranks / srun.nodes)};
  if (!srun.mpi.empty()) argv.push_back("--mpi=" + srun.mpi);
  argv.insert(argv.end(), srun.extra_args.begin(), srun.extra_args.end());
  argv.push_back("--kill-on-bad-exit=1");
  return argv;
}

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
  switch (options.launcher) {
    case Launcher::kMpirun:
      if (options.ranks > 1) argv = mpirun_prefix(options, host);
      break;
    case Launcher::kSrun:  // a job step, one rank too
      argv = srun_prefix(options);
      break;
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

}  // namespace gpudays
