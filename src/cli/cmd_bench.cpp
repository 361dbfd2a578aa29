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
#include "catalog/gpu_loader.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/slurm_options.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/output_files.h"
#include "common/units.h"
#include "distributed/launcher.h"
#include "rows/row_format.h"
#include "rows/sweep_summary.h"
#include "rows/table.h"
#include "slurm/cluster_file.h"
#include "sweep/bench_job.h"
#include "sweep/host_probe.h"
#include "sweep/sweep.h"

namespace gpudays {
namespace {

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

void run_bench(const GlobalOptions& global, const BenchRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  if (r.slurm.submit) {
    submit_bench_job(global.config_dir, r, catalog, model);
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
    check_links_possible(*gpu, r.links);
  }
  const Cluster cluster{{r.nodes, r.gpus_per_node}, gpu};
  const PlanOptions plan_options =
      planner_options(catalog, gpu->kind, {.preset = parse_preset(r.methods), .links = r.links})
          .options;
  SweepOptions options;
  options.trial_command = trial_command(global.config_dir, r, cluster);
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
  if (gpu->kind == DeviceKind::kGpu) check_trial_device(r.device);
  ResultsDb db = ResultsDb::open({.path = r.db, .catalog = &catalog});
  std::ostream& progress = r.format == "json" ? std::cerr : std::cout;
  const SweepSummary summary = run_sweep(model, cluster, plan_options, options, db, progress);
  print_sweep_summary(std::cout, r.format == "json", r.db, model, summary);
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
  add_link_options(*cmd, r->links);
  cmd->callback([&global, r] { run_bench(global, *r); });
}

}  // namespace gpudays
