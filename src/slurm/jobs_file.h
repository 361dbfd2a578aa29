// The record of submitted Slurm jobs (one JSON object per line in <slurm dir>/jobs.jsonl): what
// was submitted, where its script and log are, and which trials (a sweep) or which run directory
// (a training run) it works on, for `gpudays jobs`.
// Appending one line per submission is safe from several submitting processes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudays {

struct SubmittedJob {
  std::string job_id;
  std::string kind;  // "bench", "sweep" or "train"
  std::string name;
  std::string submitted_at;  // UTC, ISO 8601
  std::string script;
  std::string log;
  std::string db;       // bench: the results database its trials go to
  std::string run_dir;  // train: the run directory (checkpoints, metrics.jsonl)
  std::string model;
  std::string gpu;  // the trials' GPU name ("cpu": the host CPU)
  int64_t nodes = 1;
  int64_t tasks_per_node = 1;
  std::string partition;
  bool operator==(const SubmittedJob&) const = default;
};

std::string jobs_file_path(const std::string& slurm_dir);
void append_submitted_job(const std::string& path, const SubmittedJob& job);
// Every job recorded in `path` (none when it does not exist); InputError for a malformed line, a
// file that cannot be read, or a Slurm directory (its parent) that is not a directory.
std::vector<SubmittedJob> read_submitted_jobs(const std::string& path);

}  // namespace gpudays
