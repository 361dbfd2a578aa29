// A Slurm submission (`bench --slurm`, `train --slurm`): resolve the partition (cluster file, else
// sinfo), check the job against it before anything is submitted, write the script under
// --slurm-dir, print it (--dry-run) or submit it with sbatch and record the job for `gpudays jobs`.
#pragma once

#include <string>
#include <vector>

#include "slurm/jobs_file.h"
#include "slurm/slurm_job.h"

namespace gpudays {

struct SlurmRequest {
  bool submit = false;   // --slurm
  bool dry_run = false;  // --dry-run: print the script, submit nothing
  std::string cluster_file;
  std::string partition;
  std::string account;
  std::string qos;
  std::string time;                  // Slurm's format; "": the partition's limit
  int64_t cpus_per_task = 0;         // 0: the partition's CPUs split over the tasks (at least 1)
  double memory_per_node_gib = 0.0;  // 0: the partition's default
  // Where the job runs; "" : the partition's (cluster file), else none.
  std::string constraint;
  std::string nodelist;
  std::string reservation;
  std::vector<std::string> sbatch_lines;    // after the partition's
  std::string slurm_dir = "gpudays-slurm";  // scripts, logs and jobs.jsonl
};

// What the submission of one job needs beside the request: the job (shape, command), the
// device its tasks use, the plan's estimate of its duration (0: none) and its record's fields.
struct SlurmSubmission {
  SlurmJob job;  // its environment_defaults: the launch's (NCCL_P2P_DISABLE, by the caller)
  bool gpu_tasks = true;      // one GPU per task; false: CPU tasks
  double estimate_s = 0.0;    // warn when --time is shorter
  std::string estimate_what;  // how the estimate was made, for the warning
  SubmittedJob record;        // kind, db, model, gpu (job id, script, log filled here)
};

// Checks, writes the script, and prints it (--dry-run) or submits it; prints the job id and
// where its log goes. Throws InputError (nothing submitted) for a request the partition cannot
// take or when Slurm is not reachable.
void submit_slurm_job(const SlurmRequest& r, SlurmSubmission submission);

}  // namespace gpudays
