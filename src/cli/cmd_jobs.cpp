// `gpudays jobs`: the Slurm jobs submitted from here (--slurm-dir's jobs.jsonl), each with its
// state from the controller (squeue) and its progress: the trials of a sweep already in its
// database, the last step and newest checkpoint of a training run; `gpudays jobs cancel ID`
// cancels one (scancel). Parsing and printing only.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/json_fields.h"
#include "results/results_db.h"
#include "rows/row_format.h"
#include "rows/table.h"
#include "slurm/jobs_file.h"
#include "slurm/slurm_control.h"

namespace gpudays {
namespace {

struct JobsRequest {
  std::string slurm_dir = "gpudays-slurm";
  std::string format = "table";
  std::string cancel_id;
};

struct JobStatus {
  SubmittedJob job;
  std::string state;                  // Slurm's, or why it is not known
  int64_t trials = 0;                 // bench: trials of its sweep stored since it was submitted
  int64_t steps = 0;                  // train: the last step in metrics.jsonl
  std::optional<int64_t> checkpoint;  // train: the newest checkpoint's step
  std::string last_log_line;
};

// Trials its database holds for its model, GPU and shape, stored after it was submitted.
int64_t trials_since(const SubmittedJob& job) {
  if (!std::filesystem::exists(job.db)) return 0;
  TrialFilter filter;
  filter.model = job.model;
  filter.gpu = job.gpu;
  filter.num_nodes = job.nodes;
  filter.gpus_per_node = job.tasks_per_node;
  const ResultsDb db = ResultsDb::open({job.db, /*read_only=*/true});
  int64_t n = 0;
  for (const TrialRecord& t : db.query(filter)) n += t.created_at >= job.submitted_at ? 1 : 0;
  return n;
}

// The last step a training run logged (OUT/metrics.jsonl; 0 before its first).
int64_t steps_logged(const SubmittedJob& job) {
  std::ifstream in(std::filesystem::path(job.run_dir) / "metrics.jsonl");
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  const nlohmann::json j = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("step")) return 0;
  return json_int64(j.at("step")).value_or(0);
}

// The newest committed checkpoint, OUT/checkpoints/step-N (written whole, then renamed there).
std::optional<int64_t> newest_checkpoint(const SubmittedJob& job) {
  std::optional<int64_t> newest;
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::path(job.run_dir) / "checkpoints";
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const std::string digits = name.rfind("step-", 0) == 0 ? name.substr(5) : "";
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    newest = std::max<int64_t>(newest.value_or(0), std::stoll(digits));
  }
  return newest;
}

std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return last_line(text);
}

std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& jobs) {
  std::vector<std::string> ids;
  for (const SubmittedJob& j : jobs) ids.push_back(j.job_id);
  std::map<std::string, std::string> states;
  std::string unknown = "left the queue (see its log)";
  try {
    check_slurm_reachable();
    states = query_job_states(ids);
  } catch (const InputError& e) {
    unknown = "unknown (Slurm not reachable)";
  }
  std::vector<JobStatus> out;
  for (const SubmittedJob& j : jobs) {
    const auto state = states.find(j.job_id);
    JobStatus status;
    status.job = j;
    status.state = state == states.end() ? unknown : state->second;
    if (j.kind == "train") {
      status.steps = steps_logged(j);
      status.checkpoint = newest_checkpoint(j);
    } else {
      status.trials = trials_since(j);
    }
    status.last_log_line = last_log_line(j.log);
    out.push_back(status);
  }
  return out;
}

// "3 trials", or "step 40, checkpoint 35".
std::string progress(const JobStatus& s) {
  if (s.job.kind != "train") return fmt::format("{} trials", s.trials);
  if (!s.checkpoint) return fmt::format("step {}", s.steps);
  return fmt::format("step {}, checkpoint {}", s.steps, *s.checkpoint);
}

void print_jobs(const std::vector<JobStatus>& statuses, const std::string& format) {
  if (format == "json") {
    nlohmann::json j = json_document(/*row_kind=*/"job");
    j["jobs"] = nlohmann::json::array();
    for (const JobStatus& s : statuses) {
      j["jobs"].push_back(
          {{"job_id", s.job.job_id},
           {"kind", s.job.kind},
           {"state", s.state},
           {"model", s.job.model},
           {"gpu", s.job.gpu},
           {"nodes", s.job.nodes},
           {"tasks_per_node", s.job.tasks_per_node},
           {"partition", s.job.partition},
           {"submitted_at", s.job.submitted_at},
           {"trials_stored", s.trials},
           {"db", s.job.db},
           {"steps_done", s.steps},
           {"last_checkpoint", s.checkpoint ? nlohmann::json(*s.checkpoint) : nullptr},
           {"run_dir", s.job.run_dir},
           {"log", s.job.log},
           {"last_log_line", s.last_log_line}});
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  Table table({"job", "kind", "state", "model", "gpu", "shape", "submitted", "progress", "log"});
  for (const JobStatus& s : statuses) {
    table.add_row({s.job.job_id,
                   s.job.kind,
                   s.state,
                   s.job.model,
                   s.job.gpu,
                   fmt::format("{}x{}", s.job.nodes, s.job.tasks_per_node),
                   s.job.submitted_at,
                   progress(s),
                   s.job.log});
  }
  table.print(std::cout);
}

void run_jobs(const JobsRequest& r) {
  const std::vector<SubmittedJob> jobs = read_submitted_jobs(jobs_file_path(r.slurm_dir));
  if (jobs.empty()) {
    std::cout << fmt::format("No Slurm jobs submitted from {}.\n", r.slurm_dir);
    return;
  }
  print_jobs(job_statuses(jobs), r.format);
}

void run_cancel(const JobsRequest& r) {
  const std::vector<SubmittedJob> jobs = read_submitted_jobs(jobs_file_path(r.slurm_dir));
  std::vector<std::string> ids;
  for (const SubmittedJob& j : jobs) ids.push_back(j.job_id);
  if (std::find(ids.begin(), ids.end(), r.cancel_id) == ids.end()) {
    throw InputError(fmt::format("job '{}' was not submitted from {}; recorded: {}",
                                 r.cancel_id,
                                 r.slurm_dir,
                                 ids.empty() ? "none" : join_choices(ids)));
  }
  check_slurm_reachable();
  cancel_job(r.cancel_id);
  const auto job = std::find_if(
      jobs.begin(), jobs.end(), [&](const SubmittedJob& j) { return j.job_id == r.cancel_id; });
  std::cout << fmt::format("Cancelled Slurm job {}; {}\n",
                           r.cancel_id,
                           job->kind == "train"
                               ? "its ranks write a checkpoint before they stop, and submitting "
                                 "it again resumes from it."
                               : "its finished trials stay in the database, and submitting it "
                                 "again resumes it.");
}

}  // namespace

void add_jobs_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto r = std::make_shared<JobsRequest>();
  CLI::App* cmd = app.add_subcommand(
      "jobs",
      "Slurm jobs submitted with --slurm: their state and progress (trials stored, steps trained)");
  cmd->add_option("--slurm-dir", r->slurm_dir, "Where --slurm wrote its scripts and jobs.jsonl")
      ->capture_default_str();
  add_format_option(*cmd, r->format, {"table", "json"});
  CLI::App* cancel = cmd->add_subcommand("cancel", "Cancel a submitted job (scancel)");
  cancel->add_option("id", r->cancel_id, "The Slurm job id")->required();
  cancel->add_option("--slurm-dir", r->slurm_dir, "Where --slurm wrote jobs.jsonl")
      ->capture_default_str();
  cancel->callback([r] { run_cancel(*r); });
  cmd->callback([cmd, r] {
    if (cmd->got_subcommand("cancel")) return;
    run_jobs(*r);
  });
}

}  // namespace gpudays
