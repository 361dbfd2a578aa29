// Launching ranks: the command line that starts a program on one rank or several (plain, or under
// mpirun, which only starts the processes and ends the job when one fails; srun joins as another
// Launcher). Each rank finds its place with dist/rendezvous.h and its communicator with
// dist/world.h. Torch-free; `gpudays bench` launches trials with it, and the trainer will too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dist/rendezvous.h"  // rank_environment, launched_with_several_ranks, local_rank

namespace gpudays {

// Where a rank computes: its collectives go through Gloo (CPU memory) or NCCL (CUDA memory).
enum class RankDevice { kCpu, kCuda };

// The program that starts several ranks. (Slurm's srun joins here.)
enum class Launcher { kMpirun };

struct LaunchOptions {
  int64_t ranks = 1;
  RankDevice device = RankDevice::kCpu;
  // CPU ranks: OMP_NUM_THREADS given to each; 0: the host's cores split between the ranks, unless
  // OMP_NUM_THREADS is already set (then it passes through untouched).
  int64_t threads_per_rank = 0;
  Launcher launcher = Launcher::kMpirun;
  std::vector<std::string> program;  // the argv every rank runs
};

// What the launch depends on in the host it starts from: this_host() reads it; tests pass theirs.
struct LaunchHost {
  int64_t cores = 1;
  bool root = false;             // mpirun refuses root unless told
  bool omp_threads_set = false;  // OMP_NUM_THREADS is in the environment
  std::string mpirun;            // the MPI launcher found at build time; "" when none was
};
LaunchHost this_host();

// The argv of the launch: `program` itself for one rank; for several, under mpirun with
// `-np N`, `--allow-run-as-root` as root, `--oversubscribe` for CPU ranks (they share the host's
// cores by design) or more ranks than cores, and `-x OMP_NUM_THREADS=k` for CPU ranks (above).
// Throws EnvironmentError for several ranks without a launcher, InputError for options out of
// range.
std::vector<std::string> launch_argv(const LaunchOptions& options,
                                     const LaunchHost& host = this_host());

// This program's own path (/proc/self/exe), to start it again as a child or on each rank.
std::string self_path();

}  // namespace gpudays
