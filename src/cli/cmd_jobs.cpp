// `gpudays jobs`: the Slurm jobs submitted from here (--slurm-dir's jobs.jsonl), each with its
// state and progress (slurm/job_status.h); `gpudays jobs cancel ID` cancels one (scancel).
// Parsing and printing only.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "common/json_text.h"
#include "rows/row_format.h"
#include "rows/table.h"
#include "slurm/job_status.h"
#include "slurm/jobs_file.h"
#include "slurm/slurm_control.h"

namespace gpudays {
namespace {

struct JobsRequest {
  std::string slurm_dir = "gpudays-slurm";
  std::string format = "table";
  std::string cancel_id;
};

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
    std::cout << json_text(j, 2) << "\n";
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
                   job_progress(s),
                   s.job.log});
  }
  table.print(std::cout);
}

// The jobs recorded under --slurm-dir (an empty one names no directory).
std::vector<SubmittedJob> recorded_jobs(const JobsRequest& r) {
  if (r.slurm_dir.empty())
    throw InputError("--slurm-dir is empty; name the directory of jobs.jsonl");
  return read_submitted_jobs(jobs_file_path(r.slurm_dir));
}

void run_jobs(const JobsRequest& r) {
  const std::vector<SubmittedJob> jobs = recorded_jobs(r);
  if (jobs.empty() && r.format == "json") return print_jobs({}, r.format);
  if (jobs.empty()) {
    std::cout << fmt::format("No Slurm jobs submitted from {}.\n", r.slurm_dir);
    return;
  }
  print_jobs(job_statuses(jobs), r.format);
}

void run_cancel(const JobsRequest& r) {
  const std::vector<SubmittedJob> jobs = recorded_jobs(r);
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
