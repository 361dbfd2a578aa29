// `gpudays bench`: the empirical benchmark on the hardware at hand. Plans the search space, runs
// the planner-guided (or exhaustive) search with every trial in its own process, stores every
// trial in the results database, and prints the fastest configuration with its training days.
// Several ranks per trial run under the MPI launcher found when gpudays was built.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/child_process.h"
#include "bench/sweep.h"
#include "catalog/calibration_file.h"
#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/fitted_constants.h"

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
};

// The planner knows no CPU: a stand-in whose figures only order the trials (nominal 50 GFLOP/s
// and 20 GB/s per core; no matmul-ceiling check applies to CPU results).
GpuSpec host_cpu_spec(int64_t memory_limit_bytes) {
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  GpuSpec g;
  g.name = "cpu";
  g.display_name = "host CPU";
  g.architecture = "cpu";
  g.peak_fp32_tflops = g.peak_fp16_tflops = g.peak_bf16_tflops = 0.05 * cores;
  g.matmul_ceiling_fraction = 0.8;
  g.memory_bytes = memory_limit_bytes > 0
                       ? memory_limit_bytes
                       : static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  g.memory_bandwidth_gb_per_s = 20.0 * cores;
  g.gpu_link = "shared-memory";
  g.gpu_link_gb_per_s = 10.0;
  g.host_link = "none";
  g.host_link_gb_per_s = 10.0;
  return g;
}

std::string self_path() {
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path");
  return std::string(self, n);
}

// The argv prefix of one trial: `gpudays trial`, under `mpirun -np N` for several ranks. CPU ranks
// share the host's cores by design (--oversubscribe; OMP_NUM_THREADS split between them unless
// set); --allow-run-as-root when run as root (containers, CI).
std::vector<std::string> trial_command(const GlobalOptions& global, const BenchRequest& r,
                                       int64_t world) {
  std::vector<std::string> argv;
  if (world > 1) {
#ifdef GPUDAYS_MPIEXEC
    const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    argv = {GPUDAYS_MPIEXEC, "-np", std::to_string(world)};
    if (geteuid() == 0) argv.push_back("--allow-run-as-root");
    if (r.device == "cpu" || world > cores) argv.push_back("--oversubscribe");
    if (r.device == "cpu" && std::getenv("OMP_NUM_THREADS") == nullptr) {
      argv.insert(argv.end(), {"-x", fmt::format("OMP_NUM_THREADS={}",
                                                 std::max<int64_t>(1, cores / world))});
    }
#else
    throw InputError(fmt::format(
        "{} ranks per trial need an MPI launcher (mpirun), and none was found when gpudays was "
        "built: install openmpi-bin and libopenmpi-dev, then rebuild", world));
#endif
  }
  argv.push_back(self_path());
  if (!global.config_dir.empty()) argv.insert(argv.end(), {"--config-dir", global.config_dir});
  argv.push_back("trial");
  return argv;
}

// Before any trial: can this build and machine run trials on the device? (No CUDA build or no GPU
// visible: the trial's one-line error, and nothing recorded.)
void check_device(const std::string& device) {
  const ChildResult child =
      run_child({self_path(), "trial", "--check-device", device}, ChildOptions{120.0, ""});
  if (child.exit_code == 0 && !child.signaled && !child.timed_out) return;
  std::string error = child.err;
  while (!error.empty() && (error.back() == '\n' || error.back() == ' ')) error.pop_back();
  error = error.substr(error.rfind('\n') == std::string::npos ? 0 : error.rfind('\n') + 1);
  if (error.rfind("error: ", 0) == 0) error = error.substr(7);
  throw InputError(fmt::format("cannot run trials on {}: {}", device,
                               error.empty() ? "the device check failed" : error));
}

void print_summary(const BenchRequest& r, const ModelSpec& model, const SweepSummary& s) {
  const auto& best = s.search.best;
  if (r.format == "json") {
    nlohmann::json j = {{"trials_run", s.trials_run}, {"trials_reused", s.trials_reused},
                        {"method_sets", s.search.method_sets_total},
                        {"method_sets_skipped", s.search.method_sets_skipped},
                        {"method_sets_pruned", s.search.method_sets_pruned}, {"best", nullptr}};
    if (best) {
      j["best"] = {{"methods", describe(best->request.methods)},
                   {"micro_batch_size", best->request.micro_batch_size},
                   {"grad_acc_steps", best->request.grad_acc_steps},
                   {"step_time_s", best->outcome.step_time_s},
                   {"training_days", model.recipe.train_steps * best->outcome.step_time_s /
                                         kSecondsPerDay}};
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{} trials run, {} reused from {}; {} of {} method sets skipped by the "
                           "planner, {} pruned by its bound\n",
                           s.trials_run, s.trials_reused, r.db, s.search.method_sets_skipped,
                           s.search.method_sets_total, s.search.method_sets_pruned);
  if (!best) {
    std::cout << "No configuration ran successfully.\n";
    return;
  }
  std::cout << fmt::format("Best: {}, micro-batch {}, accumulation {}: {:.3f} s per step; {} for "
                           "{} steps\n",
                           describe(best->request.methods), best->request.micro_batch_size,
                           best->request.grad_acc_steps, best->outcome.step_time_s,
                           format_duration_s(model.recipe.train_steps * best->outcome.step_time_s),
                           format_count(model.recipe.train_steps));
}

void run_bench(const GlobalOptions& global, const BenchRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  GpuSpec cpu;
  const GpuSpec* gpu = nullptr;
  if (r.device == "cpu") {
    cpu = host_cpu_spec(r.memory_limit_bytes);
    gpu = &cpu;
  } else {
    if (r.gpu.empty()) throw InputError("--device cuda needs --gpu (the catalog name of this GPU)");
    gpu = &catalog.gpu(r.gpu);
  }
  const Cluster cluster{{r.nodes, r.gpus_per_node}, gpu};
  // The fitted constants come from GPU measurements; the CPU's stand-in device keeps its own.
  PlanOptions plan_options =
      r.device == "cpu" ? PlanOptions{} : calibrated_plan_options(load_calibration(catalog));
  plan_options.preset = parse_preset(r.methods);
  if (r.device == "cpu") {  // no CUDA context, NCCL buffers or cuBLAS workspace on the CPU
    plan_options.memory.cuda_context_bytes = 0;
    plan_options.memory.communicator_bytes = 0;
    plan_options.memory.cublas_workspace_bytes = 0;
  }
  SweepOptions options;
  options.trial_command = trial_command(global, r, cluster.world_size());
  options.device = r.device;
  options.model_file = r.model_file;
  options.trial_timeout_s = r.trial_timeout_s;
  options.timed_steps = r.timed_steps;
  options.memory_limit_bytes = r.memory_limit_bytes;
  options.strategy = r.strategy == "exhaustive" ? SearchStrategy::kExhaustive
                                                : SearchStrategy::kGuided;
  options.timing = parse_step_timing(r.timing);
  if (r.device != "cpu") check_device(r.device);
  ResultsDb db = ResultsDb::open({r.db});
  std::ostream& progress = r.format == "json" ? std::cerr : std::cout;
  print_summary(r, model, run_sweep(model, cluster, plan_options, options, db, progress));
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<BenchRequest>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Measure which settings are fastest on this machine and how many days pre-training takes: "
      "each trial runs in its own process with a time limit; results go to the database");
  add_model_options(*cmd, r->model, r->model_file);
  cmd->add_option("--gpu", r->gpu, "Catalog name of this machine's GPU (--device cuda)");
  cmd->add_option("--device", r->device, "cuda (the CUDA build, on a GPU) or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  add_cluster_options(*cmd, r->gpus_per_node, r->nodes,
                      "Ranks per node; more than 1 runs each trial under mpirun (on the CPU too)");
  cmd->add_option("--methods", r->methods,
                  "Method sets searched: naive (none), free-lunch, or all (with activation "
                  "checkpointing, sharding zero_1/zero_2/zero_3 and FSDP's shard_grad_op (the "
                  "stage-2 mechanism) and full_shard (stage 3), and offloading)")
      ->check(CLI::IsMember({"naive", "free-lunch", "all"}))
      ->capture_default_str();
  cmd->add_option("--strategy", r->strategy, "guided (planner-led) or exhaustive (the reference's)")
      ->check(CLI::IsMember({"guided", "exhaustive"}))
      ->capture_default_str();
  cmd->add_option("--timing", r->timing,
                  "whole: time whole optimizer steps; parts: time a micro-step, the last "
                  "micro-step and the optimizer and compose them (checked against whole steps "
                  "once per method set)")
      ->check(CLI::IsMember({"whole", "parts"}))
      ->capture_default_str();
  cmd->add_option("--memory-limit", r->memory_limit_bytes,
                  "Per-device memory cap in bytes (CPU trials raise out-of-memory above it; a CUDA "
                  "trial peaking above it counts as out-of-memory)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--db", r->db,
                  "Results database (SQLite): every trial is stored as it ends; trials already "
                  "in it are reused")
      ->capture_default_str();
  cmd->add_option("--steps", r->timed_steps,
                  "Timed steps per trial, after 1 warm-up step (with --timing parts: steps of at "
                  "most 2 micro-steps whose parts are timed)")
      ->check(CLI::Range(int64_t{3}, int64_t{1000}))
      ->capture_default_str();
  cmd->add_option("--trial-timeout", r->trial_timeout_s,
                  "Seconds before a trial (its whole process group) is killed and recorded as a "
                  "timeout")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_format_option(*cmd, r->format, {"table", "json"})
      ->description("Summary as a table, or as JSON (the progress lines then go to stderr)");
  cmd->callback([&global, r] { run_bench(global, *r); });
}

}  // namespace gpudays
