// A bench request run here: device, plan options and sweep options from the request.
#include "sweep/bench_run.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "accuracy/planner_options.h"
#include "catalog/gpu_loader.h"
#include "common/error.h"
#include "results/results_db.h"
#include "search_space/search_space.h"
#include "sweep/host_probe.h"

namespace gpudays {
namespace {

// The host CPU measured; where it cannot be (the probe failed), a stand-in that only orders the
// trials, said on stderr: the benchmark itself measures, with or without the planner's figures.
GpuSpec bench_host_cpu(const BenchRequest& r) {
  const HostCpuOptions host{r.memory_limit_bytes, r.gpus_per_node};
  try {
    return host_cpu_device(r.db, host);
  } catch (const InputError& e) {
    static bool warned = false;  // once per process: a sweep sets up every CPU cell alike
    if (!warned) {
      std::cerr << fmt::format(
          "warning: {}; the trials are ordered by a stand-in CPU spec (not "
          "measured, so MFU is not checked)\n",
          e.what());
    }
    warned = true;
    return host_cpu_stand_in(host);
  }
}

SweepOptions make_sweep_options(const std::string& config_dir,
                                const BenchRequest& r,
                                const Cluster& cluster) {
  SweepOptions options;
  options.trial_command = trial_command(config_dir, r, cluster);
  options.model_file = r.model_file;
  options.trial_timeout_s = r.trial_timeout_s;
  options.timed_steps = r.timed_steps;
  options.memory_limit_bytes = r.memory_limit_bytes;
  options.strategy = parse_search_strategy(r.strategy);
  options.timing = parse_step_timing(r.timing);
  options.retry_killed = !r.no_retry_killed;
  options.stderr_dir = r.trial_stderr_dir;
  if (const char* env = std::getenv("GPUDAYS_TRIAL_STDERR_DIR");
      env && options.stderr_dir.empty()) {
    options.stderr_dir = env;
  }
  return options;
}

}  // namespace

MethodSelection bench_methods(const BenchRequest& r) {
  MethodSelection s = parse_method_selection(r.methods);
  s.pin = combine_pins(s.pin, "--methods " + r.methods, r.pin, "the command line");
  return s;
}

BenchSetup::BenchSetup(const std::string& config_dir,
                       const BenchRequest& r,
                       const Catalog& catalog) {
  const GpuSpec* gpu = nullptr;
  if (r.device == "cpu") {  // the host CPU, measured; its ranks share it
    host_ = bench_host_cpu(r);
    gpu = &host_;
  } else {
    if (r.gpu.empty()) throw InputError("--device cuda needs --gpu (the catalog name of this GPU)");
    gpu = &catalog.gpu(r.gpu);
    check_links_possible(*gpu, r.links);
  }
  cluster_ = Cluster{{r.nodes, r.gpus_per_node}, gpu};
  const MethodSelection methods = bench_methods(r);
  plan_options_ =
      planner_options(
          catalog, gpu->kind, {.preset = methods.preset, .pin = methods.pin, .links = r.links})
          .options;
  sweep_options_ = make_sweep_options(config_dir, r, cluster_);
}

double bench_time_bound_s(const PlanResult& prediction, int64_t timed_steps, std::string& what) {
  constexpr double kTrialStartS = 30.0;  // process start, model build, first step's compilation
  double total_s = 0.0;
  int trials = 0;
  for (const PlanRow& row : prediction.rows) {
    if (!row.fits) continue;
    ++trials;
    total_s += kTrialStartS + static_cast<double>(1 + timed_steps) * row.step_time_s;
  }
  what = fmt::format("{} configurations that fit x ({} steps + {:.0f} s start-up)",
                     trials,
                     1 + timed_steps,
                     kTrialStartS);
  return total_s;
}

void check_results_db_path(const std::string& db, const Catalog& catalog) {
  namespace fs = std::filesystem;
  if (fs::exists(db)) {
    ResultsDb::open({.path = db, .catalog = &catalog});
  } else if (const fs::path dir = fs::absolute(db).parent_path(); !fs::is_directory(dir)) {
    throw InputError(fmt::format("--db {}: no directory {}", db, dir.string()));
  }
}

SweepSummary run_bench_here(const std::string& config_dir,
                            const BenchRequest& r,
                            const Catalog& catalog,
                            const ModelSpec& model,
                            std::ostream& progress) {
  // The database's own faults first: the host CPU's probe, which BenchSetup runs, keeps its
  // result beside the database, and a refused database gets nothing beside it.
  check_results_db_path(r.db, catalog);
  const BenchSetup setup(config_dir, r, catalog);
  const SweepOptions& options = setup.sweep_options();
  if (!options.stderr_dir.empty()) check_stderr_dir(options.stderr_dir);
  if (setup.cluster().gpu->kind == DeviceKind::kGpu) check_trial_device(r.device);
  check_request(model, setup.cluster());  // refused before the database is made
  ResultsDb db = ResultsDb::open({.path = r.db, .catalog = &catalog});
  return run_sweep(model, setup.cluster(), setup.plan_options(), options, db, progress);
}

}  // namespace gpudays
