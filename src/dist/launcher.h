// Launching ranks and finding one's place among them: the command line that starts a program on
// one rank or several (plain, or under mpirun; srun joins as another Launcher), the rank
// environment a launcher leaves to each process, and the communicator that launch implies for a
// rank's device. Torch-free; `gpudays bench` launches trials with it, and the trainer will too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpudays {

class Communicator;  // dist/communicator.h

// Where a rank computes: its collectives go through MPI (CPU memory) or NCCL (CUDA memory).
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

// This process's place in its launch, from the launcher's environment: Open MPI's
// OMPI_COMM_WORLD_*, MPICH's PMI_* (local rank MPI_LOCALRANKID), PMIx's PMIX_*, Slurm's
// SLURM_STEP_NUM_TASKS, SLURM_PROCID and SLURM_LOCALID, in that order: the first launcher whose
// size variable is set answers. Nothing set: one rank. Throws InputError for a variable that is not
// a number.
struct RankEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // among the ranks of this node (0 when the launcher does not say)
  bool operator==(const RankEnvironment&) const = default;
};
RankEnvironment rank_environment();
// Shorthands: started with more than one rank; this process's rank on its node.
bool launched_with_several_ranks();
int local_rank();

// The communicator of this launch for a rank computing on `device`: the single-process one for one
// rank; several ranks: MPI on the CPU, NCCL over CUDA device `cuda_device` (its id sent over MPI).
// Throws when the build lacks the engine several ranks need.
std::unique_ptr<Communicator> make_communicator(RankDevice device, int cuda_device);

}  // namespace gpudays
