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

#include "catalog/catalog.h"
#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/slurm_options.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/output_files.h"
#include "common/units.h"
#include "distributed/launcher.h"
#include "results/results_db.h"
#include "rows/row_format.h"
#include "rows/sweep_summary.h"
#include "rows/table.h"
#include "search_space/search_space.h"
#include "slurm/cluster_file.h"
#include "sweep/bench_job.h"
#include "sweep/bench_run.h"
#include "sweep/sweep.h"

namespace gpudays {
namespace {

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

// The flags that contradict each other, refused before anything is read.
void check_flags(const CLI::App& cmd,
                 const BenchRequest& r,
                 const std::vector<std::string>& slurm) {
  refuse_without_slurm(cmd, slurm, r.slurm.submit);
  if (r.slurm.submit && cmd.get_option("--format")->count() > 0 && r.format == "json") {
    throw InputError(
        "--format json is the summary of a benchmark run here; with --slurm the job's trials go "
        "to --db (`gpudays jobs`, then `gpudays results --format json`)");
  }
  if (!r.slurm.submit) check_launch_place(r.launcher, r.nodes, "--nodes");
  if (r.device == "cpu" && !r.gpu.empty() && !is_host_cpu_name(r.gpu)) {
    throw InputError(fmt::format(
        "--device cpu benchmarks the host CPU, not {}: leave out --gpu or --device cpu", r.gpu));
  }
  if (r.device == "cpu") refuse_links_on_cpu(r.links);
  if (cmd.get_option("--timing")->count() > 0 && r.strategy == "reference") {
    throw InputError(
        "--timing: --strategy reference times by its own rule (accumulation x one micro-step + "
        "the optimizer)");
  }
  if (cmd.get_option("--srun-mpi")->count() > 0 && r.launcher != "srun" && !r.slurm.submit) {
    throw InputError("--srun-mpi applies with --launcher srun (or --slurm)");
  }
  check_output_file(r.db, "--db");
}

// What the benchmark checks only once it has opened (so made) the results database, checked
// before: the cluster's shape and the model's precision on the device. The host CPU is judged by
// its stand-in (its probe runs later), which refuses fp16 as the measured CPU does; a measured CPU
// without bf16 is refused after the database is made.
void check_request_first(const Catalog& catalog, const BenchRequest& r, const ModelSpec& model) {
  GpuSpec host;
  const GpuSpec* device = &host;
  if (r.device == "cpu") {
    host = host_cpu_stand_in({r.memory_limit_bytes, r.gpus_per_node});
  } else {
    if (r.gpu.empty()) throw InputError("--device cuda needs --gpu (the catalog name of this GPU)");
    device = &catalog.gpu(r.gpu);
  }
  check_request(model, Cluster{{r.nodes, r.gpus_per_node}, device});
}

void run_bench(const GlobalOptions& global, const BenchRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  if (r.slurm.submit) {
    // The job runs this binary: without the trainer its every trial would fail on the cluster.
    submit_bench_job(global.config_dir,
                     r,
                     catalog,
                     model,
                     global.has_trainer ? "" : needs_trainer("`gpudays bench --slurm` here"));
    return;
  }
  check_request_first(catalog, r, model);
  // Trials run `gpudays trial`: without it every trial would be stored as rejected, and a later
  // build with the trainer would reuse those rows instead of measuring.
  if (!global.has_trainer) {
    // An existing database's own faults first (as with the trainer); none is made.
    if (std::filesystem::exists(r.db)) ResultsDb::open({.path = r.db, .catalog = &catalog});
    throw InputError(needs_trainer("`gpudays bench` here"));
  }
  std::ostream& progress = r.format == "json" ? std::cerr : std::cout;
  const SweepSummary summary = run_bench_here(global.config_dir, r, catalog, model, progress);
  print_sweep_summary(std::cout, r.format == "json", r.db, model, summary);
  if (!summary.search.best) {
    throw EnvironmentError(fmt::format(
        "no configuration of {} ran successfully on {}: {} trials run or reused (their outcomes "
        "are in {}), {} of {} method sets predicted not to fit",
        model.name,
        r.device == "cpu" ? "the host CPU" : catalog.gpu(r.gpu).display_name,
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
                  "Method sets searched: naive (none), free-lunch, all (with activation "
                  "checkpointing, sharding zero_1/zero_2/zero_3 and FSDP's shard_grad_op (the "
                  "stage-2 mechanism) and full_shard (stage 3), and offloading), or the reference "
                  "benchmark's grids: reference-naive (= naive) and reference-optimized (all with "
                  "free-lunch on: 12 sets on one GPU, 22 on more)")
      ->check(CLI::IsMember(method_selection_names()))
      ->capture_default_str();
  auto pins = std::make_shared<PinFlags>();
  add_pin_options(*cmd, *pins);
  cmd->add_option("--strategy",
                  r->strategy,
                  "guided: the planner orders and prunes the trials; exhaustive: every method set, "
                  "micro-batch doubled from 1 until out of memory, every one timed; reference: the "
                  "reference benchmark's rule, only each method set's largest power-of-two "
                  "micro-batch that fits counts, timed as accumulation x one micro-step + the "
                  "optimizer (stored apart: results --rule reference)")
      ->check(CLI::IsMember({"guided", "exhaustive", "reference"}))
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
  const std::vector<std::string> slurm = add_slurm_options(*cmd, r->slurm);
  cmd->add_option("--launcher",
                  r->launcher,
                  "How a trial's ranks start: mpirun, or srun (inside a Slurm job; what --slurm "
                  "writes into its script)")
      ->check(CLI::IsMember({"mpirun", "srun"}))
      ->capture_default_str();
  cmd->add_option("--srun-mpi", r->srun_mpi, "With --launcher srun: srun --mpi=... (pmix)")
      ->capture_default_str();
  add_link_options(*cmd, r->links);
  cmd->callback([&global, r, pins, cmd, slurm] {
    check_flags(*cmd, *r, slurm);
    r->pin = pins->pin();
    run_bench(global, *r);
  });
}

}  // namespace gpudays
