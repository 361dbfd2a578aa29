// `gpudays train --slurm`: a training run submitted as a Slurm batch job whose every task runs
// `gpudays train ... --resume` under srun, so that a job cancelled or pre-empted (SIGTERM: the
// trainer checkpoints, trainer/trainer.h) and submitted again resumes. Its options and the checks
// before submission; the script, sbatch and the jobs record are cli/slurm_submit.h's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/slurm_options.h"

namespace gpudays {

struct TrainSlurmRequest {
  SlurmRequest slurm;
  int64_t nodes = 0;           // 0: the run file's num_nodes
  int64_t ranks_per_node = 0;  // --gpus-per-node; 0: the run file's gpus_per_node
  // sbatch --signal=TERM@N: the ranks get SIGTERM this long before the time limit and checkpoint.
  int64_t term_before_limit_s = 300;
  // The options add_train_slurm_options registered: never passed on to the job's `train`.
  std::vector<std::string> option_names;
};

// The Slurm options of `train` (--slurm, --dry-run, --cluster, --partition, ..., --nodes,
// --gpus-per-node, --term-before-limit).
void add_train_slurm_options(CLI::App& cmd, TrainSlurmRequest& r);

// With --slurm: checks the run (run file, model, data, ranks) and submits the job whose tasks run
// `train` with `cmd`'s other options (paths made absolute, --resume added), or prints its script
// (--dry-run); returns true. `links` (train's --pair-bridge, --peer-to-peer, over the partition's)
// shape the plan's estimate and, without peer-to-peer, the script's NCCL_P2P_DISABLE default.
// Without --slurm returns false, after refusing Slurm-only options. Throws InputError (nothing
// submitted) for bad input.
bool submit_train_job_if_asked(const GlobalOptions& global,
                               const CLI::App& cmd,
                               const TrainSlurmRequest& r,
                               const LinkSettings& links);

}  // namespace gpudays
