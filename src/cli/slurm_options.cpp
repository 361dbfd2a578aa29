// The Slurm options of a submitting command.
#include "cli/slurm_options.h"

namespace gpudays {

void add_slurm_options(CLI::App& cmd, SlurmRequest& r) {
  cmd.add_flag("--slurm", r.submit, "Submit as a Slurm batch job (sbatch) instead of running here");
  cmd.add_flag("--dry-run", r.dry_run, "With --slurm: write and print the sbatch script only");
  cmd.add_option("--cluster", r.cluster_file, "Cluster description (TOML, docs/slurm.md)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--partition", r.partition, "Slurm partition (default: the cluster's default)");
  cmd.add_option("--account", r.account, "Slurm account (default: the cluster file's)");
  cmd.add_option("--qos", r.qos, "Slurm QOS (default: the cluster file's)");
  cmd.add_option(
      "--time", r.time, "Slurm time limit (M, H:M:S, D-H:M:S; default: the partition's)");
  cmd.add_option("--cpus-per-task", r.cpus_per_task, "CPUs per rank (default: the node's, split)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd.add_option("--mem-per-node-gib", r.memory_per_node_gib, "Host memory per node, GiB")
      ->check(CLI::Range(0.0, 1.0e6));
  cmd.add_option("--slurm-dir", r.slurm_dir, "Where scripts, logs and jobs.jsonl go")
      ->capture_default_str();
}

}  // namespace gpudays
