// The launch command line (plain, mpirun or srun) and this program's path. GPUDAYS_MPIEXEC, the
// mpirun CMake found, is defined for this file by src/distributed/CMakeLists.txt.
#include "distributed/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

// NAME=VALUE, refused where a launcher would split or misread it.
std::string assignment(const EnvironmentVariable& v) {
  const bool name_ok = !v.name.empty() &&
                       std::isdigit(static_cast<unsigned char>(v.name[0])) == 0 &&
                       v.name.find_first_not_of(
                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                           "0123456789_") == std::string::npos;
  if (!name_ok || v.value.find_first_of(",\n\r") != std::string::npos) {
    throw InputError(
        fmt::format("cannot pass {}={} to the ranks: a name of letters, digits and "
                    "_, a value without commas or newlines",
                    v.name,
                    v.value));
  }
  return v.name + "=" + v.value;
}

// mpirun -np N [--allow-run-as-root] [--oversubscribe] [-x OMP_NUM_THREADS=k] [-x NAME=VALUE...]
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
  for (const EnvironmentVariable& v : options.environment) {
    argv.insert(argv.end(), {"-x", assignment(v)});
  }
  return argv;
}

// srun --nodes=K --ntasks=R --ntasks-per-node=R/K [--mpi=M] [--export=ALL,NAME=VALUE...] [extra]
// --kill-on-bad-exit=1
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
  if (!options.environment.empty()) {
    std::string exported = "--export=ALL";
    for (const EnvironmentVariable& v : options.environment) exported += "," + assignment(v);
    argv.push_back(exported);
  }
  argv.insert(argv.end(), srun.extra_args.begin(), srun.extra_args.end());
  argv.push_back("--kill-on-bad-exit=1");
  return argv;
}

}  // namespace

std::optional<std::string> process_environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::vector<EnvironmentVariable> collective_environment(bool peer_to_peer,
                                                        const EnvironmentLookup& lookup) {
  if (peer_to_peer || lookup("NCCL_P2P_DISABLE")) return {};
  return {{"NCCL_P2P_DISABLE", "1"}};
}

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
      if (options.ranks > 1) {
        argv = mpirun_prefix(options, host);
      } else if (!options.environment.empty()) {
        argv.push_back("env");
        for (const EnvironmentVariable& v : options.environment) argv.push_back(assignment(v));
      }
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
