// The request of `gpudays bench`, as its options fill it; `bench --slurm` turns it back into the
// job's command line (bench_launch.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/model_spec.h"
#include "cli/commands.h"
#include "cli/slurm_options.h"

namespace gpudays {

struct BenchRequest {
  std::string model;
  std::string model_file;
  std::string gpu;
  std::string device = "cuda";
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  std::string methods = "all";
  std::string strategy = "guided";
  std::string timing = "parts";
  int64_t memory_limit_bytes = 0;
  std::string db = "gpudays.db";
  int64_t timed_steps = 3;
  double trial_timeout_s = 600.0;
  std::string format = "table";
  bool no_retry_killed = false;
  std::string trial_stderr_dir;     // --trial-stderr, else $GPUDAYS_TRIAL_STDERR_DIR
  SlurmRequest slurm;               // --slurm: submit the sweep as a batch job
  std::string launcher = "mpirun";  // how each trial's ranks start: mpirun, or srun (in a job)
  std::string srun_mpi = "pmix";    // srun --mpi of each trial's step (launcher srun)
};

// The argv of one trial: `gpudays trial`, on every rank of the launch (distributed/launcher.h).
std::vector<std::string> trial_command(const GlobalOptions& global,
                                       const BenchRequest& r,
                                       int64_t world);

// Submits the sweep as a Slurm batch job: the sweep once in the batch shell, each trial an srun
// step; the plan's estimate of its duration warns a short --time.
void submit_bench_job(const GlobalOptions& global,
                      const BenchRequest& r,
                      const Catalog& catalog,
                      const ModelSpec& model);

}  // namespace gpudays
