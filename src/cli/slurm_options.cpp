// The Slurm options of a submitting command.
#include "cli/slurm_options.h"

#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

// A validator from one of slurm_job.h's checks (its problem, or "" when there is none).
CLI::Validator sbatch_check(std::string (*problem)(const std::string&), const char* what) {
  return CLI::Validator([problem](std::string& text) -> std::string { return problem(text); },
                        what);
}

}  // namespace

std::vector<std::string> add_slurm_options(CLI::App& cmd, SlurmRequest& r) {
  const size_t before = cmd.get_options().size();
  cmd.add_flag("--slurm", r.submit, "Submit as a Slurm batch job (sbatch) instead of running here");
  cmd.add_flag("--dry-run", r.dry_run, "With --slurm: write and print the sbatch script only");
  cmd.add_option("--cluster", r.cluster_file, "Cluster description (TOML, docs/slurm.md)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--partition", r.partition, "Slurm partition (default: the cluster's default)")
      ->check(sbatch_check(sbatch_value_problem, "NAME"));
  cmd.add_option("--account", r.account, "Slurm account (default: the cluster file's)")
      ->check(sbatch_check(sbatch_value_problem, "NAME"));
  cmd.add_option("--qos", r.qos, "Slurm QOS (default: the cluster file's)")
      ->check(sbatch_check(sbatch_value_problem, "NAME"));
  cmd.add_option(
      "--time", r.time, "Slurm time limit (M, H:M:S, D-H:M:S; default: the partition's)");
  cmd.add_option("--cpus-per-task", r.cpus_per_task, "CPUs per rank (default: the node's, split)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd.add_option("--mem-per-node-gib", r.memory_per_node_gib, "Host memory per node, GiB")
      ->check(CLI::Range(0.0, 1.0e6));
  cmd.add_option("--constraint",
                 r.constraint,
                 "sbatch --constraint: node features, e.g. the GPU type where one partition has "
                 "several (default: the partition's constraint)")
      ->check(sbatch_check(sbatch_value_problem, "FEATURES"));
  cmd.add_option("--nodelist", r.nodelist, "sbatch --nodelist (default: the partition's nodelist)")
      ->check(sbatch_check(sbatch_value_problem, "NODES"));
  cmd.add_option("--reservation", r.reservation, "sbatch --reservation (default: the partition's)")
      ->check(sbatch_check(sbatch_value_problem, "NAME"));
  cmd.add_option("--sbatch-line",
                 r.sbatch_lines,
                 "A further #SBATCH option, e.g. --sbatch-line=--exclusive (repeatable; after the "
                 "partition's sbatch_lines)")
      ->check(sbatch_check(sbatch_line_problem, "OPTION"));
  cmd.add_option("--slurm-dir", r.slurm_dir, "Where scripts, logs and jobs.jsonl go")
      ->capture_default_str();
  const std::vector<CLI::Option*> options = cmd.get_options();
  std::vector<std::string> names;
  for (size_t i = before; i < options.size(); ++i) names.push_back(options[i]->get_name());
  return names;
}

void refuse_without_slurm(const CLI::App& cmd, const std::vector<std::string>& names, bool submit) {
  if (submit) return;
  for (const std::string& name : names) {
    if (cmd.get_option(name)->count() > 0) {
      throw InputError(fmt::format("{} applies only with --slurm", name));
    }
  }
}

void check_launch_place(const std::string& launcher, int64_t nodes, const std::string& nodes_flag) {
  const bool in_job = std::getenv("SLURM_JOB_ID") != nullptr;
  if (launcher == "srun" && !in_job) {
    throw InputError(
        "--launcher srun starts each trial as a job step of a Slurm allocation, and this process "
        "is in none (no SLURM_JOB_ID): run it inside salloc or sbatch, or give --slurm to submit "
        "a job");
  }
  if (const char* job_nodes = std::getenv("SLURM_JOB_NUM_NODES"); in_job && job_nodes) {
    char* end = nullptr;
    const long allocated = std::strtol(job_nodes, &end, 10);
    if (end != job_nodes && *end == '\0' && allocated > 0 && nodes > allocated) {
      throw InputError(fmt::format("{} {}: this Slurm allocation has {} node{}",
                                   nodes_flag,
                                   nodes,
                                   allocated,
                                   allocated == 1 ? "" : "s"));
    }
  }
  if (nodes > 1 && launcher != "srun") {
    throw InputError(fmt::format(
        "{} {}: trials over several nodes run under srun inside a Slurm job of that many nodes "
        "(--launcher srun), or give --slurm to submit one; mpirun here starts every rank on this "
        "host",
        nodes_flag,
        nodes));
  }
}

}  // namespace gpudays
