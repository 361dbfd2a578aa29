// Job states and progress.
#include "slurm/job_status.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "common/child_process.h"
#include "common/error.h"
#include "results/results_db.h"
#include "slurm/slurm_control.h"
#include "trainer/checkpoint_files.h"
#include "trainer/train_log.h"

namespace gpudays {
namespace {

// Trials its database holds for its model, GPU and shape (a sweep's: every model and shape of its
// GPU), stored after it was submitted.
int64_t trials_since(const SubmittedJob& job) {
  if (!std::filesystem::exists(job.db)) return 0;
  TrialFilter filter;
  filter.model = job.model;
  filter.gpu = job.gpu;
  if (job.kind != "sweep") {  // a sweep's job runs every shape of its GPU type up to its own
    filter.num_nodes = job.nodes;
    filter.gpus_per_node = job.tasks_per_node;
  }
  filter.rule = std::nullopt;  // a job measures under either rule
  try {
    return ResultsDb::open({job.db, /*read_only=*/true}).count_since(filter, job.submitted_at);
  } catch (const ResultsFileError& e) {
    // A starting job creates its database before its first write: an empty file is no trial
    // stored yet, not a reason to fail the whole listing.
    if (e.kind() == ResultsFileError::Kind::kMissing) return 0;
    throw;
  }
}

std::optional<int64_t> newest_checkpoint(const SubmittedJob& job) {
  const std::vector<int64_t> steps =
      committed_steps((std::filesystem::path(job.run_dir) / "checkpoints").string());
  if (steps.empty()) return std::nullopt;
  return steps.front();
}

// Read from its last 64 KiB: a training log can be gigabytes.
std::string last_log_line(const std::string& path) {
  constexpr std::streamoff kTailBytes = 64 << 10;
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return "";  // not seekable
  in.seekg(std::max<std::streamoff>(0, size - kTailBytes));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return last_line(text);
}

JobStatus status_of(const SubmittedJob& j, std::string state) {
  JobStatus status;
  status.job = j;
  status.state = std::move(state);
  if (j.kind == "train") {
    status.steps = last_logged_step((std::filesystem::path(j.run_dir) / "metrics.jsonl").string());
    status.checkpoint = newest_checkpoint(j);
  } else {
    status.trials = trials_since(j);
  }
  status.last_log_line = last_log_line(j.log);
  return status;
}

}  // namespace

std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& jobs) {
  std::vector<std::string> ids;
  for (const SubmittedJob& j : jobs) ids.push_back(j.job_id);
  std::map<std::string, std::string> states;
  std::string unknown = "left the queue (see its log)";
  try {
    check_slurm_reachable();
    states = query_job_states(ids);
  } catch (const InputError&) {
    unknown = "unknown (Slurm not reachable)";
  }
  std::vector<JobStatus> out;
  for (const SubmittedJob& j : jobs) {
    const auto state = states.find(j.job_id);
    out.push_back(status_of(j, state == states.end() ? unknown : state->second));
  }
  return out;
}

std::string job_progress(const JobStatus& s) {
  if (s.job.kind != "train") return fmt::format("{} trials", s.trials);
  if (!s.checkpoint) return fmt::format("step {}", s.steps);
  return fmt::format("step {}, checkpoint {}", s.steps, *s.checkpoint);
}

}  // namespace gpudays
