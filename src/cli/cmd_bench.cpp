// `gpudays bench`: the empirical benchmark on the hardware at hand. Plans the search space, runs
// the planner-guided (or exhaustive) search with every trial in its own process, stores every
// trial in the results database, and prints the fastest configuration with its training days.
// Several ranks per trial run under the MPI launcher found when gpudays was built, or under srun
// inside a Slurm job (distributed/launcher.h).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "accuracy/planner_options.h"
#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/slurm_options.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/output_files.h"
#include "common/units.h"
#include "distributed/launcher.h"
#include "rows/row_format.h"
#include "rows/table.h"
#include "slurm/cluster_file.h"
#include "sweep/host_probe.h"
#include "sweep/sweep.h"

namespace gpudays {
namespace {

struct BenchRequest {
  std::string model;
  std::string model_file;
  std::string gpu;
  std::string device = "cuda";
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  std::string methods = "all";
  std::string strategy = "guided";
  std::string timing = "parts";
  int64_t memory_limit_bytes = 0;
  std::string db = "gpudays.db";
  int64_t timed_steps = 3;
  double trial_timeout_s = 600.0;
  std::string format = "table";
  bool no_retry_killed = false;
  std::string trial_stderr_dir;     // --trial-stderr, else $GPUDAYS_TRIAL_STDERR_DIR
  SlurmRequest slurm;               // --slurm: submit the sweep as a batch job
  std::string launcher = "mpirun";  // how each trial's ranks start: mpirun, or srun (in a job)
  std::string srun_mpi = "pmix";    // srun --mpi of each trial's step (launcher srun)
};

constexpr double kMaxTrialTimeoutS = 7 * 86400.0;
constexpr int64_t kMinMemoryLimitBytes = int64_t{1} << 20;

// --memory-limit: 0 (the device's memory) or at least 1 MiB (no model's trial runs below it).
CLI::Validator memory_limit_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int64_t bytes = 0;
        if (!CLI::detail::lexical_cast(text, bytes)) return "'" + text + "' is not a byte count";
        if (bytes == 0 || bytes >= kMinMemoryLimitBytes) return "";
        return fmt::format("'{}' is neither 0 (the device's memory) nor at least {} bytes (1 MiB)",
                           text,
                           kMinMemoryLimitBytes);
      },
      "0 or >= 1 MiB");
}

// The argv of one trial: `gpudays trial`, on every rank of the launch (distributed/launcher.h).
std::vector<std::string> trial_command(const GlobalOptions& global,
                                       const BenchRequest& r,
                                       int64_t world) {
  LaunchOptions launch;
  launch.ranks = world;
  launch.device = r.device == "cpu" ? RankDevice::kCpu : RankDevice::kCuda;
  // Inside a Slurm allocation: one job step per trial.
  launch.launcher = r.launcher == "srun" ? Launcher::kSrun : Launcher::kMpirun;
  launch.srun.nodes = r.nodes;
  launch.srun.mpi = r.srun_mpi;
  launch.program = {self_path()};
  if (!global.config_dir.empty()) {
    launch.program.insert(launch.program.end(), {"--config-dir", global.config_dir});
  }
  launch.program.push_back("trial");
  return launch_argv(launch);
}

// --trial-stderr (or $GPUDAYS_TRIAL_STDERR_DIR): a folder that exists or can be made, before any
// trial runs.
void check_stderr_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw InputError(fmt::format("--trial-stderr {}: not a folder that can be made ({})",
                                 dir,
                                 ec ? ec.message() : "a file is in the way"));
  }
}

// Before any trial: can this build and machine run trials on the device? (No CUDA build or no GPU
// visible: the trial's one-line error, and nothing recorded.)
void check_device(const std::string& device) {
  const ChildResult child =
      run_child({self_path(), "trial", "--check-device", device}, ChildOptions{120.0, ""});
  if (child.exit_code == 0 && !child.signaled && !child.timed_out) return;
  std::string error = error_line(child.err);
  for (const char* prefix : {"gpudays: ", "error: "}) {
    if (error.rfind(prefix, 0) == 0) error = error.substr(std::string(prefix).size());
  }
  throw EnvironmentError(fmt::format(
      "cannot run trials on {}: {}", device, error.empty() ? "the device check failed" : error));
}

void print_summary(const BenchRequest& r, const ModelSpec& model, const SweepSummary& s) {
  const auto& best = s.search.best;
  if (r.format == "json") {
    nlohmann::json j = json_document(/*row_kind=*/"");
    j.update({{"trials_run", s.trials_run},
              {"trials_reused", s.trials_reused},
              {"method_sets", s.search.method_sets_total},
              {"method_sets_skipped", s.search.method_sets_skipped},
              {"method_sets_pruned", s.search.method_sets_pruned},
              {"best", nullptr}});
    if (best) {
      j["best"] = {
          {"methods", describe(best->request.methods)},
          {"micro_batch_size", best->request.micro_batch_size},
          {"grad_acc_steps", best->request.grad_acc_steps},
          {"step_time_s", best->outcome.step_time_s},
          {"training_days", model.recipe.train_steps * best->outcome.step_time_s / kSecondsPerDay}};
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format(
      "{} trials run, {} reused from {}; {} of {} method sets skipped by the "
      "planner, {} pruned by its bound\n",
      s.trials_run,
      s.trials_reused,
      r.db,
      s.search.method_sets_skipped,
      s.search.method_sets_total,
      s.search.method_sets_pruned);
  if (!best) {
    std::cout << "No configuration ran successfully.\n";
    return;
  }
  std::cout << fmt::format(
      "Best: {}, micro-batch {}, accumulation {}: {:.3f} s per step; {} for "
      "{} steps\n",
      describe(best->request.methods),
      best->request.micro_batch_size,
      best->request.grad_acc_steps,
      best->outcome.step_time_s,
      format_duration_s(model.recipe.train_steps * best->outcome.step_time_s),
      format_count(model.recipe.train_steps));
}

// The host CPU measured; where it cannot be (the probe failed), a stand-in that only orders the
// trials, said on stderr: the benchmark itself measures, with or without the planner's figures.
GpuSpec bench_host_cpu(const BenchRequest& r) {
  const HostCpuOptions host{r.memory_limit_bytes, r.gpus_per_node};
  try {
    return host_cpu_device(r.db, host);
  } catch (const InputError& e) {
    std::cerr << fmt::format(
        "warning: {}; the trials are ordered by a stand-in CPU spec (not "
        "measured, so MFU is not checked)\n",
        e.what());
    return host_cpu_stand_in(host);
  }
}

// The bench command line the job runs: this request, with absolute paths, trials under srun.
std::vector<std::string> bench_job_argv(const GlobalOptions& global,
                                        const BenchRequest& r,
                                        const std::string& srun_mpi) {
  std::vector<std::string> argv = {self_path()};
  if (!global.config_dir.empty())
    argv.insert(argv.end(), {"--config-dir", absolute_path(global.config_dir)});
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
  if (r.no_retry_killed) argv.push_back("--no-retry-killed");
  if (!r.trial_stderr_dir.empty()) {
    argv.insert(argv.end(), {"--trial-stderr", absolute_path(r.trial_stderr_dir)});
  }
  return argv;
}

// The plan's estimate of the sweep on a GPU: every configuration that fits, once, for its warm-up
// and timed steps plus a start-up each (the guided search runs fewer; a bound, not a forecast).
double bench_estimate_s(const Catalog& catalog,
                        const ModelSpec& model,
                        const BenchRequest& r,
                        std::string& what) {
  if (r.device == "cpu" || r.gpu.empty()) return 0.0;
  constexpr double kTrialStartS = 30.0;  // process start, model build, first step's compilation
  const Cluster cluster{{r.nodes, r.gpus_per_node}, &catalog.gpu(r.gpu)};
  const PlanOptions options =
      planner_options(catalog, DeviceKind::kGpu, {.preset = parse_preset(r.methods)}).options;
  const PlanResult result = plan(model, cluster, options);
  double total_s = 0.0;
  int trials = 0;
  for (const PlanRow& row : result.rows) {
    if (!row.fits) continue;
    ++trials;
    total_s += kTrialStartS + static_cast<double>(1 + r.timed_steps) * row.step_time_s;
  }
  what = fmt::format("{} configurations that fit x ({} steps + {:.0f} s start-up)",
                     trials,
                     1 + r.timed_steps,
                     kTrialStartS);
  return total_s;
}

void submit_bench_job(const GlobalOptions& global,
                      const BenchRequest& r,
                      const Catalog& catalog,
                      const ModelSpec& model) {
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
  s.job.command = bench_job_argv(global, r, srun_mpi);
  submit_slurm_job(r.slurm, s);
}

void run_bench(const GlobalOptions& global, const BenchRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  if (r.slurm.submit) {
    submit_bench_job(global, r, catalog, model);
    return;
  }
  GpuSpec cpu;
  const GpuSpec* gpu = nullptr;
  if (r.device == "cpu") {  // the host CPU, measured; its ranks share it
    cpu = bench_host_cpu(r);
    gpu = &cpu;
  } else {
    if (r.gpu.empty()) throw InputError("--device cuda needs --gpu (the catalog name of this GPU)");
    gpu = &catalog.gpu(r.gpu);
  }
  const Cluster cluster{{r.nodes, r.gpus_per_node}, gpu};
  const PlanOptions plan_options =
      planner_options(catalog, gpu->kind, {.preset = parse_preset(r.methods)}).options;
  SweepOptions options;
  options.trial_command = trial_command(global, r, cluster.world_size());
  options.model_file = r.model_file;
  options.trial_timeout_s = r.trial_timeout_s;
  options.timed_steps = r.timed_steps;
  options.memory_limit_bytes = r.memory_limit_bytes;
  options.strategy =
      r.strategy == "exhaustive" ? SearchStrategy::kExhaustive : SearchStrategy::kGuided;
  options.timing = parse_step_timing(r.timing);
  options.retry_killed = !r.no_retry_killed;
  options.stderr_dir = r.trial_stderr_dir;
  if (const char* env = std::getenv("GPUDAYS_TRIAL_STDERR_DIR");
      env && options.stderr_dir.empty()) {
    options.stderr_dir = env;
  }
  if (!options.stderr_dir.empty()) check_stderr_dir(options.stderr_dir);
  if (gpu->kind == DeviceKind::kGpu) check_device(r.device);
  ResultsDb db = ResultsDb::open({r.db});
  std::ostream& progress = r.format == "json" ? std::cerr : std::cout;
  const SweepSummary summary = run_sweep(model, cluster, plan_options, options, db, progress);
  print_summary(r, model, summary);
  if (!summary.search.best) {
    throw EnvironmentError(fmt::format(
        "no configuration of {} ran successfully on {}: {} trials run or reused (their outcomes "
        "are in {}), {} of {} method sets predicted not to fit",
        model.name,
        gpu->display_name,
        summary.trials_run + summary.trials_reused,
        r.db,
        summary.search.method_sets_skipped,
        summary.search.method_sets_total));
  }
}

}  // namespace

GpuSpec host_cpu_device(const std::string& db, const HostCpuOptions& options) {
  const HostProbeOptions probe{{self_path(), "trial", "--probe-device", kHostCpuName},
                               host_probe_cache_path(db),
                               options.ranks};
  return host_cpu_spec(measure_host_cpu(probe), options);
}

void add_bench_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<BenchRequest>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Measure which settings are fastest on this machine and how many days pre-training takes: "
      "each trial runs in its own process with a time limit; results go to the database");
  add_model_options(*cmd, r->model, r->model_file);
  add_gpu_option(
      *cmd, r->gpu, "Catalog name or alias, any case, of this machine's GPU (--device cuda)");
  cmd->add_option("--device", r->device, "cuda (the CUDA build, on a GPU) or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  add_cluster_options(*cmd,
                      r->gpus_per_node,
                      r->nodes,
                      "Ranks per node; more than 1 runs each trial under mpirun (on the CPU too)");
  cmd->add_option("--methods",
                  r->methods,
                  "Method sets searched: naive (none), free-lunch, or all (with activation "
                  "checkpointing, sharding zero_1/zero_2/zero_3 and FSDP's shard_grad_op (the "
                  "stage-2 mechanism) and full_shard (stage 3), and offloading)")
      ->check(CLI::IsMember({"naive", "free-lunch", "all"}))
      ->capture_default_str();
  cmd->add_option("--strategy", r->strategy, "guided (planner-led) or exhaustive (the reference's)")
      ->check(CLI::IsMember({"guided", "exhaustive"}))
      ->capture_default_str();
  cmd->add_option("--timing",
                  r->timing,
                  "whole: time whole optimizer steps; parts: time a micro-step, the last "
                  "micro-step and the optimizer and compose them (checked against whole steps "
                  "once per method set)")
      ->check(CLI::IsMember({"whole", "parts"}))
      ->capture_default_str();
  cmd->add_option("--memory-limit",
                  r->memory_limit_bytes,
                  "Per-device memory cap in bytes (CPU trials raise out-of-memory above it; a CUDA "
                  "trial peaking above it counts as out-of-memory)")
      ->check(memory_limit_check());
  cmd->add_option("--db",
                  r->db,
                  "Results database (SQLite): every trial is stored as it ends; trials already "
                  "in it are reused")
      ->capture_default_str();
  cmd->add_option("--steps",
                  r->timed_steps,
                  "Timed steps per trial, after 1 warm-up step (with --timing parts: steps of at "
                  "most 2 micro-steps whose parts are timed)")
      ->check(CLI::Range(int64_t{3}, int64_t{1000}))
      ->capture_default_str();
  cmd->add_option("--trial-timeout",
                  r->trial_timeout_s,
                  "Seconds before a trial (its whole process group) is killed and recorded as a "
                  "timeout")
      ->check(number_check(0.0, kMaxTrialTimeoutS, /*low_open=*/true))
      ->capture_default_str();
  cmd->add_flag("--no-retry-killed",
                r->no_retry_killed,
                "Reuse trials killed by a signal from outside (the OOM killer, pre-emption, a "
                "stray kill) as recorded; by default they are measured again");
  cmd->add_option(
      "--trial-stderr",
      r->trial_stderr_dir,
      "Keep each trial's whole stderr in this folder (SWEEP.trial-NNN.stderr, headed by its "
      "configuration); default $GPUDAYS_TRIAL_STDERR_DIR, else not kept (the results "
      "keep the error's line)");
  add_format_option(*cmd, r->format, {"table", "json"})
      ->description("Summary as a table, or as JSON (the progress lines then go to stderr)");
  add_slurm_options(*cmd, r->slurm);
  cmd->add_option("--launcher",
                  r->launcher,
                  "How a trial's ranks start: mpirun, or srun (inside a Slurm job; what --slurm "
                  "writes into its script)")
      ->check(CLI::IsMember({"mpirun", "srun"}))
      ->capture_default_str();
  cmd->add_option("--srun-mpi", r->srun_mpi, "With --launcher srun: srun --mpi=... (pmix)")
      ->capture_default_str();
  cmd->callback([&global, r] { run_bench(global, *r); });
}

}  // namespace gpudays
