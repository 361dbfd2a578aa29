// The request of a benchmark sweep, as `gpudays bench`'s options fill it, and how it launches:
// each trial's command line, and for `bench --slurm` the batch job that runs the sweep (its
// command line: this request with absolute paths, trials under srun).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/model_spec.h"
#include "search_space/cluster.h"
#include "search_space/search_space.h"
#include "slurm/slurm_submit.h"

namespace gpudays {

// A trial's time limit is at most a week; a memory limit is 0 (the device's) or at least 1 MiB (no
// model's trial runs below it).
inline constexpr double kMaxTrialTimeoutS = 7 * 86400.0;
inline constexpr int64_t kMinMemoryLimitBytes = int64_t{1} << 20;

struct BenchRequest {
  std::string model;
  std::string model_file;
  std::string gpu;
  std::string device = "cuda";
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  std::string methods = "all";  // a method selection (search_space.h: parse_method_selection)
  ConfigurationPin pin;         // fields pinned on top of it (--free-lunch on, ...)
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
  LinkSettings links;               // --pair-bridge, --peer-to-peer; unset: the GPU file's
};

// The argv of one trial: `gpudays [--config-dir DIR] trial`, on every rank of the launch
// (distributed/launcher.h); GPU ranks without peer-to-peer get NCCL_P2P_DISABLE=1 unless the
// environment sets it (collective_environment).
std::vector<std::string> trial_command(const std::string& config_dir,
                                       const BenchRequest& r,
                                       const Cluster& cluster);

// Submits the sweep as a Slurm batch job: the sweep once in the batch shell, each trial an srun
// step; the plan's estimate of its duration warns a short --time. `cannot_run`: why the job's
// command (this binary) could not run the sweep it starts, or empty: then, once the request is
// checked, the submission (not a --dry-run) is refused with it.
void submit_bench_job(const std::string& config_dir,
                      const BenchRequest& r,
                      const Catalog& catalog,
                      const ModelSpec& model,
                      const std::string& cannot_run = "");

}  // namespace gpudays
