// `gpudays train --slurm`: the checks before submission and the training job (every task runs
// `gpudays train ... --resume` under srun; the run directory on a path every node sees).
#include "cli/train_slurm.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "accuracy/planner_options.h"
#include "catalog/catalog.h"
#include "catalog/gpu_loader.h"
#include "catalog/host_cpu.h"
#include "common/error.h"
#include "common/output_files.h"
#include "data/samples.h"
#include "distributed/launcher.h"
#include "plan/planner.h"
#include "search_space/search_space.h"
#include "slurm/cluster_file.h"
#include "trainer/run_file.h"
#include "trainer/run_setup.h"

namespace gpudays {
namespace {

// `train`'s path options: made absolute, since the job may start in another directory.
constexpr std::array<std::string_view, 4> kPathOptions = {
    "--config", "--data", "--out", "--init-from"};

template <typename Names>
bool one_of(const std::string& name, const Names& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What every task runs: this program's `train` with the command line's other options, paths made
// absolute and --resume added (a first run starts fresh; a re-submitted one continues).
std::vector<std::string> train_job_argv(const GlobalOptions& global,
                                        const CLI::App& cmd,
                                        const TrainSlurmRequest& r) {
  std::vector<std::string> argv = {self_path()};
  if (!global.config_dir.empty())
    argv.insert(argv.end(), {"--config-dir", absolute_path(global.config_dir)});
  argv.push_back("train");
  for (const CLI::Option* option : cmd.get_options()) {
    const std::string name = option->get_name();
    if (option->count() == 0 || name == "--resume" || one_of(name, r.option_names)) continue;
    if (option->get_type_size() == 0) {  // a flag
      if (option->as<bool>()) argv.push_back(name);
      continue;
    }
    for (const std::string& value : option->results()) {
      argv.insert(argv.end(), {name, one_of(name, kPathOptions) ? absolute_path(value) : value});
    }
  }
  argv.push_back("--resume");
  return argv;
}

std::string option_value(const CLI::App& cmd, const std::string& name) {
  const CLI::Option* option = cmd.get_option(name);
  return option->count() > 0 ? option->as<std::string>() : "";
}

// Everything the job's ranks would refuse, refused here before anything is submitted: the run
// file, its model and GPU, the data, and the split of the global batch over the job's ranks.
ModelSpec checked_model(const GlobalOptions& global,
                        const CLI::App& cmd,
                        const RunFile& run,
                        int64_t world) {
  const Catalog catalog = Catalog::load({global.config_dir});
  ModelSpec model = run_model(catalog, run, option_value(cmd, "--config"));
  if (run.gpu != kHostCpuName) catalog.gpu(run.gpu);  // an unknown GPU names the valid ones
  configuration_on(run, world);                       // the global batch splits on the ranks
  if (const std::string problem = method_set_problem(run.methods, world); !problem.empty()) {
    throw InputError(fmt::format("{} ranks: {}", world, problem));
  }
  const std::string data = run_data_path(run, option_value(cmd, "--data"));
  if (is_vision(model.family)) {
    data::open_image_samples(data);
  } else {
    data::open_token_samples(data, model.arch.seq_len - 1);
  }
  return model;
}

// The plan's estimate of the whole run on the job's GPUs: the recipe's steps at the predicted step
// time of the run file's configuration (accumulation recomputed for the job's ranks). 0 on the CPU
// or for a configuration the planner finds does not fit (the ranks will say so).
double train_estimate_s(const Catalog& catalog,
                        const RunFile& run,
                        const ModelSpec& model,
                        const Cluster& cluster,
                        const LinkSettings& links,
                        std::string& what) {
  if (run.gpu == kHostCpuName || model.recipe.train_steps <= 0) return 0.0;
  const Configuration config = configuration_on(run, cluster.world_size());
  const PlanRow row = plan_configuration(
      model, cluster, config, planner_options(catalog, DeviceKind::kGpu, {.links = links}).options);
  if (!row.fits || !(row.step_time_s > 0)) return 0.0;
  what = fmt::format("{} steps x {:.3g} s predicted per step; the whole run",
                     model.recipe.train_steps,
                     row.step_time_s);
  return static_cast<double>(model.recipe.train_steps) * row.step_time_s;
}

}  // namespace

void add_train_slurm_options(CLI::App& cmd, TrainSlurmRequest& r) {
  const size_t before = cmd.get_options().size();
  add_slurm_options(cmd, r.slurm);
  cmd.add_option("--nodes", r.nodes, "With --slurm: nodes (default: the run file's num_nodes)")
      ->check(CLI::Range(int64_t{1}, kMaxNodes));
  cmd.add_option("--gpus-per-node",
                 r.ranks_per_node,
                 "With --slurm: ranks per node, one GPU each (CPU ranks for gpu = \"cpu\"; "
                 "default: the run file's gpus_per_node)")
      ->check(CLI::Range(int64_t{1}, kMaxGpusPerNode));
  cmd.add_option("--term-before-limit",
                 r.term_before_limit_s,
                 "With --slurm: seconds before the time limit at which the ranks get SIGTERM and "
                 "checkpoint (sbatch --signal)")
      ->check(CLI::Range(int64_t{0}, int64_t{65535}))
      ->capture_default_str();
  const std::vector<CLI::Option*> options = cmd.get_options();
  for (size_t i = before; i < options.size(); ++i) r.option_names.push_back(options[i]->get_name());
}

bool submit_train_job_if_asked(const GlobalOptions& global,
                               const CLI::App& cmd,
                               const TrainSlurmRequest& r,
                               const LinkSettings& command_links) {
  refuse_without_slurm(cmd, r.option_names, r.slurm.submit);
  if (!r.slurm.submit) return false;
  const std::string config = option_value(cmd, "--config");
  const RunFile run = read_run_file(config);
  const int64_t nodes = r.nodes > 0 ? r.nodes : run.num_nodes;
  const int64_t per_node = r.ranks_per_node > 0 ? r.ranks_per_node : run.gpus_per_node;
  const ModelSpec model = checked_model(global, cmd, run, nodes * per_node);
  const std::string out = absolute_path(option_value(cmd, "--out"));
  SlurmSubmission s;
  s.job.name = fmt::format("gpudays-train-{}", model.name);
  s.job.description = fmt::format(
      "gpudays train: {} on {} node(s) x {} {} rank(s); run directory {} (resumes "
      "from its newest checkpoint when submitted again)",
      model.name,
      nodes,
      per_node,
      run.gpu == kHostCpuName ? "CPU" : run.gpu,
      out);
  s.job.nodes = nodes;
  s.job.tasks_per_node = per_node;
  s.job.launch = JobLaunch::kEveryTask;
  s.job.term_before_limit_s = r.term_before_limit_s;
  s.gpu_tasks = run.gpu != kHostCpuName;
  s.record.kind = "train";
  s.record.model = model.name;
  s.record.gpu = run.gpu;
  s.record.run_dir = out;
  s.job.command = train_job_argv(global, cmd, r);
  if (run.gpu != kHostCpuName) {
    const Catalog catalog = Catalog::load({global.config_dir});
    const Cluster cluster{{nodes, per_node}, &catalog.gpu(run.gpu)};
    const LinkSettings links =
        command_links.over(cluster_links(r.slurm.cluster_file, r.slurm.partition));
    check_links_possible(*cluster.gpu, links);
    s.estimate_s = train_estimate_s(catalog, run, model, cluster, links, s.estimate_what);
    // Written as defaults: a value set where the job runs wins.
    if (cluster.world_size() > 1) {
      for (const EnvironmentVariable& v :
           collective_environment(links.peer_to_peer_on(*cluster.gpu), nothing_set)) {
        s.job.environment_defaults.emplace_back(v.name, v.value);
      }
    }
  }
  submit_slurm_job(r.slurm, s);
  return true;
}

}  // namespace gpudays
