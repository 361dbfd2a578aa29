// Launching ranks: the command line that starts a program on one rank or several, plain, under
// mpirun (a local launch: it only starts the processes and ends the launch when one fails) or
// under srun (a job step inside a Slurm allocation). Each rank finds its place with
// distributed/rendezvous.h and its communicator with distributed/world.h. Torch-free; `gpudays
// bench` launches its trials with it and src/slurm its jobs' steps (a Slurm training job: `train`
// on every task).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/rendezvous.h"  // rank_environment, launched_with_several_ranks, local_rank

namespace gpudays {

// Where a rank computes: its collectives go through Gloo (CPU memory) or NCCL (CUDA memory).
enum class RankDevice { kCpu, kCuda };

// The program that starts the ranks: mpirun on this host, or srun inside a Slurm allocation.
enum class Launcher { kMpirun, kSrun };

// How srun starts a job step: its nodes (the ranks spread evenly over them) and how MPI (or PMIx)
// wires the ranks up. mpirun ignores it.
struct SrunOptions {
  int64_t nodes = 1;
  std::string mpi = "pmix";  // srun --mpi; "" leaves Slurm's default (MpiDefault)
  std::vector<std::string> extra_args;
};

// One environment variable a launch gives its ranks.
struct EnvironmentVariable {
  std::string name;
  std::string value;
  bool operator==(const EnvironmentVariable&) const = default;
};

// A variable of the environment gpudays runs in: process_environment (getenv), or a test's.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> process_environment(const std::string& name);
// An environment with nothing set: what a job script's defaults are built against.
inline std::optional<std::string> nothing_set(const std::string&) {
  return std::nullopt;
}

// What NCCL needs on the ranks of GPUs without peer-to-peer (catalog/gpu_spec.h, LinkSettings):
// NCCL_P2P_DISABLE=1, so that intra-node traffic is staged through host memory instead of peer
// copies that such GPUs cannot do (the RTX 4090's hang or corrupt; docs/planner.md). Nothing with
// peer-to-peer, and nothing where the environment sets NCCL_P2P_DISABLE already: the user's value
// wins.
std::vector<EnvironmentVariable> collective_environment(
    bool peer_to_peer, const EnvironmentLookup& lookup = process_environment);

struct LaunchOptions {
  int64_t ranks = 1;
  RankDevice device = RankDevice::kCpu;
  // CPU ranks under mpirun: OMP_NUM_THREADS given to each; 0: the host's cores split between the
  // ranks, unless OMP_NUM_THREADS is already set (then it passes through untouched). Under srun
  // the job's script sets it from the CPUs Slurm gives each task.
  int64_t threads_per_rank = 0;
  Launcher launcher = Launcher::kMpirun;
  SrunOptions srun;
  std::vector<EnvironmentVariable> environment;  // set on every rank (collective_environment)
  std::vector<std::string> program;              // the argv every rank runs
};

// What the launch depends on in the host it starts from: this_host() reads it; tests pass theirs.
struct LaunchHost {
  int64_t cores = 1;
  bool root = false;             // mpirun refuses root unless told
  bool omp_threads_set = false;  // OMP_NUM_THREADS is in the environment
  std::string mpirun;            // the MPI launcher found at build time; "" when none was
};
LaunchHost this_host();

// The argv of the launch.
// - mpirun: `program` itself for one rank; for several, under mpirun with `-np N`,
//   `--allow-run-as-root` as root, `--oversubscribe` for CPU ranks (they share the host's cores by
//   design) or more ranks than cores, and `-x OMP_NUM_THREADS=k` for CPU ranks (above).
// - srun: always a job step, one rank too: `srun --nodes=K --ntasks=R --ntasks-per-node=R/K
//   [--mpi=M] [extra] --kill-on-bad-exit=1 PROGRAM` (a failed rank ends the step).
// - `environment`: `-x NAME=VALUE` each for mpirun, `--export=ALL,NAME=VALUE,...` for srun, and
//   `env NAME=VALUE ... PROGRAM` for one plain process.
// Throws EnvironmentError for several ranks without mpirun, InputError for options out of range
// (ranks that do not spread evenly over srun's nodes included).
std::vector<std::string> launch_argv(const LaunchOptions& options,
                                     const LaunchHost& host = this_host());

// This program's own path (/proc/self/exe), to start it again as a child or on each rank.
std::string self_path();

}  // namespace gpudays
