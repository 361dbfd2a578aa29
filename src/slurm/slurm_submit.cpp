// Submitting one Slurm job: partition checks, script, sbatch, the jobs record.
#include "slurm/slurm_submit.h"

#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output_files.h"
#include "common/units.h"
#include "slurm/cluster_file.h"
#include "slurm/slurm_control.h"

namespace gpudays {
namespace {

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), format, std::gmtime(&now));
  return buffer;
}

// The partition from the cluster file, else from sinfo; nullopt only for a dry run without
// either (the script is still written, unchecked).
std::optional<SlurmPartition> resolve_partition(const SlurmRequest& r, SlurmJob& job) {
  if (!r.cluster_file.empty()) {
    const SlurmCluster cluster = load_slurm_cluster(r.cluster_file);
    const SlurmPartition& p = cluster.partition(r.partition);
    if (job.account.empty()) job.account = cluster.account;
    if (job.qos.empty()) job.qos = cluster.qos;
    job.srun_mpi = cluster.launcher.srun_mpi;
    job.srun_args = cluster.launcher.srun_args;
    job.setup = cluster.launcher.setup;
    job.gres_name = cluster.launcher.gres_name;
    job.constraint = p.constraint;
    job.nodelist = p.nodelist;
    job.reservation = p.reservation;
    job.sbatch_lines = p.sbatch_lines;
    return p;
  }
  if (r.dry_run && r.partition.empty()) return std::nullopt;
  if (r.dry_run) check_slurm_reachable();  // else checked already
  const std::vector<SlurmPartition> partitions = query_partitions();
  SlurmCluster live;
  live.source = "this cluster (sinfo)";
  live.partitions = partitions;
  if (r.partition.empty() && !partitions.empty()) return partitions.front();
  return live.partition(r.partition);
}

// --constraint, --nodelist and --reservation win over the partition's; --sbatch-line adds to its
// lines (the command line checked them; render_sbatch_script checks them again).
void apply_placement_flags(const SlurmRequest& r, SlurmJob& job) {
  if (!r.constraint.empty()) job.constraint = r.constraint;
  if (!r.nodelist.empty()) job.nodelist = r.nodelist;
  if (!r.reservation.empty()) job.reservation = r.reservation;
  job.sbatch_lines.insert(job.sbatch_lines.end(), r.sbatch_lines.begin(), r.sbatch_lines.end());
}

// Nothing the partition cannot take is submitted.
void check_against(const SlurmPartition& p, const SlurmSubmission& s) {
  const SlurmJob& job = s.job;
  if (s.gpu_tasks && job.tasks_per_node > p.gpus_per_node) {
    throw InputError(fmt::format("{} GPUs per node asked, but partition '{}' has {} per node",
                                 job.tasks_per_node,
                                 p.name,
                                 p.gpus_per_node));
  }
  const int64_t cpus = job.tasks_per_node * job.cpus_per_task;
  if (p.cpus_per_node > 0 && cpus > p.cpus_per_node) {
    throw InputError(
        fmt::format("{} tasks x {} CPUs per node asked, but partition '{}' has {} CPUs "
                    "per node",
                    job.tasks_per_node,
                    job.cpus_per_task,
                    p.name,
                    p.cpus_per_node));
  }
  if (p.nodes > 0 && job.nodes > p.nodes) {
    throw InputError(
        fmt::format("{} nodes asked, but partition '{}' has {}", job.nodes, p.name, p.nodes));
  }
  if (p.memory_per_node_bytes > 0 && job.memory_per_node_bytes > p.memory_per_node_bytes) {
    throw InputError(fmt::format("{} of memory per node asked, but partition '{}' has {}",
                                 format_gib(job.memory_per_node_bytes),
                                 p.name,
                                 format_gib(p.memory_per_node_bytes)));
  }
  if (p.max_time_s > 0 && job.time_limit_s > p.max_time_s) {
    throw InputError(fmt::format("time limit {} is above partition '{}''s limit {}",
                                 format_slurm_time(job.time_limit_s),
                                 p.name,
                                 format_slurm_time(p.max_time_s)));
  }
}

void warn_if_short(const SlurmSubmission& s) {
  if (s.estimate_s <= 0 || s.job.time_limit_s <= 0 || s.job.time_limit_s >= s.estimate_s) return;
  std::cerr << fmt::format(
      "warning: time limit {} is shorter than the plan's estimate of {} for this job ({}); it may "
      "be stopped before it finishes (re-submitting resumes it)\n",
      format_duration_s(s.job.time_limit_s),
      format_duration_s(s.estimate_s),
      s.estimate_what);
}

// --slurm-dir names a directory, or a path where one can be made.
void check_slurm_dir(const std::string& dir) {
  if (dir.empty()) throw InputError("--slurm-dir is empty; name the directory for the job's files");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    throw InputError(fmt::format("--slurm-dir {} is not a directory", dir));
  }
}

}  // namespace

void submit_slurm_job(const SlurmRequest& r, SlurmSubmission s) {
  check_slurm_dir(r.slurm_dir);
  if (!r.dry_run) check_slurm_reachable();
  SlurmJob& job = s.job;
  job.partition = r.partition;
  job.account = r.account;
  job.qos = r.qos;
  job.time_limit_s = r.time.empty() ? 0.0 : parse_slurm_time_s(r.time);
  job.memory_per_node_bytes = r.memory_per_node_gib * kGiB;
  const std::optional<SlurmPartition> partition = resolve_partition(r, job);
  apply_placement_flags(r, job);
  job.cpus_per_task = r.cpus_per_task;
  if (job.cpus_per_task == 0) {
    const int64_t node_cpus = partition ? partition->cpus_per_node : 0;
    job.cpus_per_task = std::max<int64_t>(1, node_cpus / job.tasks_per_node);
  }
  if (partition) {
    job.partition = partition->sbatch_name();
    if (s.gpu_tasks) job.gpus_per_node = job.tasks_per_node;
    check_against(*partition, s);
  } else if (s.gpu_tasks) {
    job.gpus_per_node = job.tasks_per_node;
  }
  job.environment.emplace_back("OMP_NUM_THREADS", std::to_string(job.cpus_per_task));
  if (!job.srun_mpi.empty()) job.environment.emplace_back("SLURM_MPI_TYPE", job.srun_mpi);
  warn_if_short(s);
  const std::string dir = absolute_path(r.slurm_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("cannot create {}: {}", dir, ec.message()));
  job.log_dir = dir;
  const std::string script = render_sbatch_script(job);
  const std::string path = fmt::format("{}/{}-{}.sbatch", dir, job.name, utc_now("%Y%m%dT%H%M%S"));
  write_file_atomically(path, script);  // whole, or an IoError before anything is submitted
  if (r.dry_run) {
    std::cout << script << fmt::format("# written to {}; not submitted (--dry-run)\n", path);
    return;
  }
  s.record.job_id = submit_sbatch(path);
  s.record.name = job.name;
  s.record.submitted_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  s.record.script = path;
  s.record.log = fmt::format("{}/{}-{}.out", dir, job.name, s.record.job_id);
  s.record.nodes = job.nodes;
  s.record.tasks_per_node = job.tasks_per_node;
  s.record.partition = job.partition;
  append_submitted_job(jobs_file_path(dir), s.record);
  std::cout << fmt::format("Submitted Slurm job {} ({} x {} ranks, partition {}); log: {}\n",
                           s.record.job_id,
                           job.nodes,
                           job.tasks_per_node,
                           job.partition.empty() ? "default" : job.partition,
                           s.record.log);
}

}  // namespace gpudays
