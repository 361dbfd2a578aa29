// The state and progress of the Slurm jobs submitted from here (their record in jobs.jsonl): the
// controller's state (squeue), the trials of a sweep already in its database, the last step and
// newest checkpoint of a training run (read through the trainer's own readers), the log's last
// line. `gpudays jobs` prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slurm/jobs_file.h"

namespace gpudays {

struct JobStatus {
  SubmittedJob job;
  std::string state;                  // Slurm's, or why it is not known
  int64_t trials = 0;                 // bench: trials of its sweep stored since it was submitted
  int64_t steps = 0;                  // train: the last step in metrics.jsonl
  std::optional<int64_t> checkpoint;  // train: the newest checkpoint's step
  std::string last_log_line;
};

// Each job's status; Slurm not reachable: its state says so.
std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& jobs);

// "3 trials", or "step 40, checkpoint 35".
std::string job_progress(const JobStatus& status);

}  // namespace gpudays
