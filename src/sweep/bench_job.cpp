// How a bench launches: each trial's command line (every rank under the launcher), and for
// `bench --slurm` the job's command line (this request, absolute paths, trials under srun) and
// the plan's estimate of the sweep.
#include <fmt/format.h>

#include "accuracy/planner_options.h"
#include "catalog/gpu_loader.h"
#include "catalog/host_cpu.h"
#include "common/output_files.h"
#include "distributed/launcher.h"
#include "plan/planner.h"
#include "slurm/cluster_file.h"
#include "sweep/bench_job.h"
#include "sweep/bench_run.h"

namespace gpudays {
namespace {

const char* on_off(bool on) {
  return on ? "on" : "off";
}

// The bench command line the job runs: this request, with absolute paths, trials under srun.
std::vector<std::string> bench_job_argv(const std::string& config_dir,
                                        const BenchRequest& r,
                                        const std::string& srun_mpi) {
  std::vector<std::string> argv = {self_path()};
  if (!config_dir.empty()) argv.insert(argv.end(), {"--config-dir", absolute_path(config_dir)});
  argv.push_back("bench");
  if (!r.model_file.empty()) argv.insert(argv.end(), {"--model-file", absolute_path(r.model_file)});
  if (r.model_file.empty()) argv.insert(argv.end(), {"--model", r.model});
  if (!r.gpu.empty()) argv.insert(argv.end(), {"--gpu", r.gpu});
  argv.insert(argv.end(),
              {"--device",
               r.device,
               "--gpus-per-node",
               std::to_string(r.gpus_per_node),
               "--nodes",
               std::to_string(r.nodes),
               "--methods",
               r.methods,
               "--strategy",
               r.strategy,
               "--timing",
               r.timing,
               "--db",
               absolute_path(r.db),
               "--steps",
               std::to_string(r.timed_steps),
               "--trial-timeout",
               fmt::format("{}", r.trial_timeout_s),
               "--launcher",
               "srun",
               "--srun-mpi",
               srun_mpi});
  if (r.memory_limit_bytes > 0) {
    argv.insert(argv.end(), {"--memory-limit", std::to_string(r.memory_limit_bytes)});
  }
  const std::span<const MethodField> fields = method_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (r.pin.pinned(i)) {
      argv.insert(argv.end(),
                  {fmt::format("--{}", fields[i].label), fields[i].text(r.pin.methods)});
    }
  }
  if (r.pin.micro_batch_size) {
    argv.insert(argv.end(), {"--micro-batch-size", std::to_string(*r.pin.micro_batch_size)});
  }
  if (r.no_retry_killed) argv.push_back("--no-retry-killed");
  if (!r.trial_stderr_dir.empty()) {
    argv.insert(argv.end(), {"--trial-stderr", absolute_path(r.trial_stderr_dir)});
  }
  if (r.links.pair_bridge) argv.insert(argv.end(), {"--pair-bridge", on_off(*r.links.pair_bridge)});
  if (r.links.peer_to_peer) {
    argv.insert(argv.end(), {"--peer-to-peer", on_off(*r.links.peer_to_peer)});
  }
  return argv;
}

// The plan's estimate of the sweep on a GPU (bench_time_bound_s); 0 on the CPU.
double bench_estimate_s(const Catalog& catalog,
                        const ModelSpec& model,
                        const BenchRequest& r,
                        std::string& what) {
  if (r.device == "cpu" || r.gpu.empty()) return 0.0;
  const BenchSetup setup(/*config_dir=*/"", r, catalog);
  return bench_time_bound_s(
      plan(model, setup.cluster(), setup.plan_options()), r.timed_steps, what);
}

}  // namespace

// The argv of one trial: `gpudays trial`, on every rank of the launch (distributed/launcher.h).
std::vector<std::string> trial_command(const std::string& config_dir,
                                       const BenchRequest& r,
                                       const Cluster& cluster) {
  LaunchOptions launch;
  launch.ranks = cluster.world_size();
  launch.device = cluster.gpu->kind == DeviceKind::kCpu ? RankDevice::kCpu : RankDevice::kCuda;
  if (launch.ranks > 1 && launch.device == RankDevice::kCuda) {
    launch.environment = collective_environment(r.links.peer_to_peer_on(*cluster.gpu));
  }
  // Inside a Slurm allocation: one job step per trial.
  launch.launcher = r.launcher == "srun" ? Launcher::kSrun : Launcher::kMpirun;
  launch.srun.nodes = r.nodes;
  launch.srun.mpi = r.srun_mpi;
  launch.program = {self_path()};
  if (!config_dir.empty())
    launch.program.insert(launch.program.end(), {"--config-dir", config_dir});
  launch.program.push_back("trial");
  return launch_argv(launch);
}

void submit_bench_job(const std::string& config_dir,
                      const BenchRequest& request,
                      const Catalog& catalog,
                      const ModelSpec& model,
                      const std::string& cannot_run) {
  BenchRequest r = request;  // the partition's links where the command line leaves them
  r.links = r.links.over(cluster_links(r.slurm.cluster_file, r.slurm.partition));
  if (r.device != "cpu" && !r.gpu.empty()) check_links_possible(catalog.gpu(r.gpu), r.links);
  SlurmSubmission s;
  s.job.name = fmt::format("gpudays-bench-{}-{}", model.name, r.device == "cpu" ? "cpu" : r.gpu);
  s.job.description = fmt::format("gpudays bench: {} on {} node(s) x {} {} rank(s), results in {}",
                                  model.name,
                                  r.nodes,
                                  r.gpus_per_node,
                                  r.device == "cpu" ? "CPU" : r.gpu,
                                  absolute_path(r.db));
  s.job.nodes = r.nodes;
  s.job.tasks_per_node = r.gpus_per_node;
  s.job.launch = JobLaunch::kBatchShell;
  s.gpu_tasks = r.device != "cpu";
  s.estimate_s = bench_estimate_s(catalog, model, r, s.estimate_what);
  s.record.kind = "bench";
  s.record.db = absolute_path(r.db);
  s.record.model = model.name;
  s.record.gpu = r.device == "cpu" ? std::string(kHostCpuName) : catalog.gpu(r.gpu).name;
  // The sweep runs once in the batch shell; its trials start under srun (--launcher srun), with
  // the srun --mpi the cluster file names (SLURM_MPI_TYPE in the script would do the same).
  std::string srun_mpi = r.srun_mpi;
  if (!r.slurm.cluster_file.empty())
    srun_mpi = load_slurm_cluster(r.slurm.cluster_file).launcher.srun_mpi;
  s.job.command = bench_job_argv(config_dir, r, srun_mpi);
  if (r.device != "cpu" && r.nodes * r.gpus_per_node > 1) {
    // Written as defaults: a value set where the job runs wins.
    for (const EnvironmentVariable& v :
         collective_environment(r.links.peer_to_peer_on(catalog.gpu(r.gpu)), nothing_set)) {
      s.job.environment_defaults.emplace_back(v.name, v.value);
    }
  }
  if (!cannot_run.empty() && !r.slurm.dry_run) throw InputError(cannot_run);
  submit_slurm_job(r.slurm, s);
}

}  // namespace gpudays
