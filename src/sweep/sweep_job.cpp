// A Slurm job per GPU type of a sweep grid.
#include "sweep/sweep_job.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "common/error.h"
#include "common/output_files.h"
#include "distributed/launcher.h"
#include "slurm/cluster_file.h"

namespace gpudays {
namespace {

// The partition of the cluster file whose GPU is `gpu` ("cpu": one without GPUs).
std::string partition_of(const Catalog& catalog,
                         const SlurmRequest& slurm,
                         const std::string& gpu) {
  if (!slurm.partition.empty() || slurm.cluster_file.empty()) return slurm.partition;
  const SlurmCluster cluster = load_slurm_cluster(slurm.cluster_file);
  for (const SlurmPartition& p : cluster.partitions) {
    const bool cpu = gpu == kHostCpuName;
    if (cpu ? p.gpu.empty() : (!p.gpu.empty() && catalog.gpu(p.gpu).name == gpu)) return p.name;
  }
  throw InputError(fmt::format(
      "{}: partitions: none of GPU type {} (name one with --partition)", slurm.cluster_file, gpu));
}

// `gpudays sweep FILE` for the cells of one GPU type, as the job runs it.
std::vector<std::string> job_argv(const SweepGrid& grid,
                                  const GridOptions& o,
                                  const std::string& gpu,
                                  int64_t max_nodes,
                                  int64_t max_per_node,
                                  const std::string& srun_mpi) {
  std::vector<std::string> argv = {self_path()};
  if (!o.config_dir.empty()) argv.insert(argv.end(), {"--config-dir", absolute_path(o.config_dir)});
  argv.insert(argv.end(), {"sweep", absolute_path(grid.path)});
  if (gpu == kHostCpuName) argv.insert(argv.end(), {"--device", "cpu"});
  if (gpu != kHostCpuName) argv.insert(argv.end(), {"--device", "cuda", "--gpu", gpu});
  argv.insert(argv.end(),
              {"--max-nodes",
               std::to_string(max_nodes),
               "--max-gpus-per-node",
               std::to_string(max_per_node),
               "--db",
               absolute_path(o.here.db),
               "--launcher",
               "srun",
               "--srun-mpi",
               srun_mpi});
  if (o.here.no_retry_killed) argv.push_back("--no-retry-killed");
  if (!o.here.trial_stderr_dir.empty()) {
    argv.insert(argv.end(), {"--trial-stderr", absolute_path(o.here.trial_stderr_dir)});
  }
  return argv;
}

void submit_gpu_job(const Catalog& catalog,
                    const SweepGrid& grid,
                    const GridOptions& o,
                    SlurmRequest slurm,
                    const std::string& gpu) {
  int64_t max_nodes = 1;
  int64_t max_per_node = 1;
  for (const SweepCell& c : sweep_cells(grid)) {
    if (c.gpu != gpu) continue;
    max_nodes = std::max(max_nodes, c.nodes);
    max_per_node = std::max(max_per_node, c.gpus_per_node);
  }
  slurm.partition = partition_of(catalog, slurm, gpu);
  std::string srun_mpi = o.here.srun_mpi;
  if (!slurm.cluster_file.empty()) {
    srun_mpi = load_slurm_cluster(slurm.cluster_file).launcher.srun_mpi;
  }
  SlurmSubmission s;
  s.job.name = fmt::format("gpudays-sweep-{}", gpu);
  s.job.description = fmt::format("gpudays sweep {}: the cells of {}, results in {}",
                                  absolute_path(grid.path),
                                  gpu,
                                  absolute_path(o.here.db));
  s.job.nodes = max_nodes;
  s.job.tasks_per_node = max_per_node;
  s.job.launch = JobLaunch::kBatchShell;
  s.job.command = job_argv(grid, o, gpu, max_nodes, max_per_node, srun_mpi);
  s.gpu_tasks = gpu != kHostCpuName;
  s.record.kind = "sweep";
  s.record.db = absolute_path(o.here.db);
  s.record.gpu = gpu;
  submit_slurm_job(slurm, s);
}

}  // namespace

void submit_sweep_jobs(const Catalog& catalog,
                       const SweepGrid& grid,
                       const GridOptions& options,
                       const SlurmRequest& slurm) {
  std::vector<std::string> gpus;
  for (const std::string& gpu : grid.gpus) {
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
  }
  // Every GPU type's partition first: a cluster file that lacks one is refused before any job is
  // written or submitted, never after some.
  for (const std::string& gpu : gpus) partition_of(catalog, slurm, gpu);
  for (const std::string& gpu : gpus) submit_gpu_job(catalog, grid, options, slurm, gpu);
}

}  // namespace gpudays
