// `gpudays plan`: the analytic planner from the command line, on a catalog GPU or on the host CPU
// (measured by its probe, cmd_bench.cpp's host_cpu_device).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "accuracy/calibrate.h"
#include "accuracy/planner_options.h"
#include "catalog/catalog.h"
#include "catalog/gpu_loader.h"
#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "common/error.h"
#include "common/json_text.h"
#include "common/units.h"
#include "plan/planner.h"
#include "plan/suggest.h"
#include "plan/workload.h"
#include "results/results_db.h"
#include "rows/op_rows.h"
#include "rows/plan_rows.h"
#include "slurm/cluster_file.h"
#include "sweep/host_probe.h"

namespace gpudays {
namespace {

struct PlanRequest {
  std::string model;
  std::string model_file;
  std::string gpu;
  std::string device = "cuda";
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  std::string methods = "all";
  bool all_rows = false;
  bool ops = false;  // the best configuration's operations (plan/op_breakdown.h)
  std::string format = "table";
  double inter_node_gb_per_s = 12.5;
  double cpu_adam_params_per_s = 1.0e9;
  double host_memory_gib = 0.0;  // 0: the default (twice the node's GPU memory, at least 64 GiB)
  std::string image_input = "packed";
  // Whose code runs the model (the planner's ModelCode names) and whether torch.compile does;
  // the default is gpudays' own engine, uncompiled, which `train` and `bench` run.
  std::string model_code = "engine";
  bool compiled = false;
  std::string attention_kernel;    // empty: the model code's (plan/workload.h, attention_kernel)
  double gpu_power_limit_w = 0.0;  // 0: the GPU's TDP
  double power_limit_fraction = -1.0;  // --power-limit-fraction; < 0: none
  int64_t cpu_cores_per_gpu = InputOptions{}.cpu_cores_per_gpu;
  bool cpu_cores_given = false;
  LinkSettings links;  // --pair-bridge, --peer-to-peer; unset: the partition's, the GPU's
  std::string db = "gpudays.db";
  bool db_given = false;
  bool no_calibration = false;
  // Pinned fields of one configuration ("on"/"off", a sharding name, a micro-batch); empty or 0:
  // searched.
  PinFlags pins;
  // --cluster FILE [--partition P]: the GPU, GPUs per node, network and host memory of a Slurm
  // partition (docs/slurm.md), where the command line does not give them.
  std::string cluster_file;
  std::string partition;
  bool gpus_per_node_given = false;
  bool inter_node_given = false;
  bool image_input_given = false;
};

// The partition's figures the request took, within the flags' bounds: a cluster file is held to
// what the command line would be (gpus_per_node = 1000, inter_node_gb_per_s = 1e-300).
void check_partition_figures(const PlanRequest& asked, const PlannedHardware& h) {
  const std::string& file = asked.cluster_file;
  if (!asked.gpus_per_node_given && (h.gpus_per_node < 1 || h.gpus_per_node > kMaxGpusPerNode)) {
    throw InputError(
        fmt::format("{}: gpus_per_node: {} is not in [1, {}] (--gpus-per-node's range)",
                    file,
                    h.gpus_per_node,
                    kMaxGpusPerNode));
  }
  if (!asked.inter_node_given) {
    if (const std::string problem = inter_node_problem(h.inter_node_gb_per_s); !problem.empty())
      throw InputError(fmt::format("{}: inter_node_gb_per_s: {}", file, problem));
  }
  const bool memory_from_file = asked.host_memory_gib == 0.0 && h.host_memory_gib != 0.0;
  if (memory_from_file &&
      !(h.host_memory_gib >= kMinHostMemoryGib && h.host_memory_gib <= kMaxHostMemoryGib)) {
    throw InputError(fmt::format("{}: memory_per_node_gib: {} is not in [{:g}, {:g}] GiB",
                                 file,
                                 h.host_memory_gib,
                                 kMinHostMemoryGib,
                                 kMaxHostMemoryGib));
  }
}

// The request with the partition's figures filled in where it left them out.
PlanRequest with_cluster(PlanRequest r) {
  if (r.cluster_file.empty()) {
    if (!r.partition.empty()) throw InputError("--partition needs --cluster FILE");
    return r;
  }
  const PlannedHardware h = fill_from_partition({r.gpu,
                                                 r.device == "cuda",
                                                 r.nodes,
                                                 r.gpus_per_node,
                                                 r.gpus_per_node_given,
                                                 r.inter_node_gb_per_s,
                                                 r.inter_node_given,
                                                 r.host_memory_gib,
                                                 r.links,
                                                 r.cpu_cores_given ? r.cpu_cores_per_gpu : 0},
                                                r.cluster_file,
                                                r.partition);
  check_partition_figures(r, h);
  r.gpu = h.gpu;
  r.gpus_per_node = h.gpus_per_node;
  r.inter_node_gb_per_s = h.inter_node_gb_per_s;
  r.host_memory_gib = h.host_memory_gib;
  if (h.cpu_cores_per_gpu > 0) r.cpu_cores_per_gpu = h.cpu_cores_per_gpu;
  r.links = h.links;
  return r;
}

// Benchmark trials for calibration: from --db, or from ./gpudays.db when it exists.
std::vector<TrialRecord> load_trials(const Catalog& catalog, const PlanRequest& r) {
  if (r.no_calibration) return {};
  if (!r.db_given && !std::filesystem::exists(r.db)) return {};
  return ResultsDb::open({.path = r.db, .read_only = true, .catalog = &catalog}).query({});
}

// The implementation a request plans: gpudays' engine, or another stack's code as it runs.
Implementation requested_implementation(const PlanRequest& r, const ModelSpec& model) {
  Implementation implementation;
  implementation.code = parse_model_code(r.model_code);
  const std::string mismatch = model_code_mismatch(implementation.code, model);
  if (!mismatch.empty()) throw InputError(fmt::format("--model-code: {}", mismatch));
  if (r.compiled && implementation.code == ModelCode::kEngine) {
    throw InputError(
        "--compiled needs --model-code: gpudays' engine runs uncompiled (torch.compile is how "
        "other stacks run, e.g. --model-code llama_reference --compiled)");
  }
  implementation.compiled = r.compiled;
  if (!r.attention_kernel.empty()) {
    implementation.attention_kernel = parse_attention_kernel(r.attention_kernel);
  }
  return implementation;
}

// The image loader's flags describe where image samples come from: a text model has none.
void check_input_flags(const PlanRequest& r, const ModelSpec& model) {
  if (is_vision(model.family)) return;
  const char* flag = r.image_input_given ? "--image-input"
                     : r.cpu_cores_given ? "--cpu-cores-per-gpu"
                                         : nullptr;
  if (flag == nullptr) return;
  throw InputError(fmt::format("{} applies to vision models (vit, convnext); {} is a {} model",
                               flag,
                               model.name,
                               to_string(model.family)));
}

// The device planned on: a catalog GPU, or the host CPU as its probe measured it.
const GpuSpec& plan_device(const GlobalOptions& global,
                           const Catalog& catalog,
                           const PlanRequest& r,
                           GpuSpec& host) {
  try {
    return planned_device(catalog, r.device, r.gpu, {r.db, r.gpus_per_node}, host);
  } catch (const InputError& e) {
    rethrow_probe_failure(global, e);
  }
}

// The power limit the command line gives, by either flag: the name it was given by.
const char* power_limit_flag(const PlanRequest& r) {
  return r.power_limit_fraction >= 0.0 ? "--power-limit-fraction" : "--gpu-power-limit-w";
}

// A power limit names a GPU's: refused for the host CPU before its probe runs.
void check_power_limit_device(const PlanRequest& r) {
  const bool limited = r.gpu_power_limit_w > 0.0 || r.power_limit_fraction >= 0.0;
  if (limited && (r.device == "cpu" || is_host_cpu_name(r.gpu))) {
    throw InputError(fmt::format("{} applies to a GPU, not to --device cpu", power_limit_flag(r)));
  }
}

// The device under --gpu-power-limit-w or --power-limit-fraction (kept in `limited`), or as it
// is.
const GpuSpec& with_power_limit(const GpuSpec& gpu, const PlanRequest& r, GpuSpec& limited) {
  if (r.power_limit_fraction >= 0.0) {  // its range is checked where it is parsed
    limited = gpu;
    limited.limit_power_to_share(r.power_limit_fraction);
    return limited;
  }
  if (r.gpu_power_limit_w <= 0.0) return gpu;
  if (r.gpu_power_limit_w < gpu.tdp_w * GpuSpec::kLowestPowerLimitFraction) {
    throw InputError(fmt::format(
        "--gpu-power-limit-w {:g} is below a quarter of the {}'s {:g} W TDP: no GPU lets its "
        "limit go that low, and the clock's cube-root law says nothing there",
        r.gpu_power_limit_w,
        gpu.name,
        gpu.tdp_w));
  }
  if (r.gpu_power_limit_w > gpu.tdp_w) {
    throw InputError(fmt::format(
        "--gpu-power-limit-w {:g} is above the {}'s TDP of {:g} W: the catalog's peaks and "
        "ceilings are measured at the TDP",
        r.gpu_power_limit_w,
        gpu.name,
        gpu.tdp_w));
  }
  limited = gpu;
  limited.power_limit_w = r.gpu_power_limit_w;
  return limited;
}

// Without configs/calibration.toml the planner plans with its own constants: said once.
void note_constants(const Catalog& catalog, const GpuSpec& gpu, const PlannerOptions& setup) {
  if (gpu.kind != DeviceKind::kGpu || !setup.fitted_constants_path.empty()) return;
  std::cerr << fmt::format(
      "note: no {}/calibration.toml: planning with the planner's own constants (uncalibrated)\n",
      catalog.config_dir());
}

void run_plan(const GlobalOptions& global, const PlanRequest& request) {
  const PlanRequest r = with_cluster(request);
  if (r.ops && r.format != "table" && r.format != "json") {
    throw InputError("--ops lists operations in the table or JSON output, not --format " +
                     r.format);
  }
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  check_input_flags(r, model);
  check_power_limit_device(r);
  GpuSpec host;
  GpuSpec limited;
  const GpuSpec& gpu = with_power_limit(plan_device(global, catalog, r, host), r, limited);
  if (gpu.kind == DeviceKind::kGpu)
    check_links_possible(gpu, r.links);
  else
    refuse_links_on_cpu(r.links);
  if (r.no_calibration && r.db_given && gpu.kind == DeviceKind::kGpu) {
    // (On the host CPU, --db also says where its probe is kept: both have a use.)
    throw InputError(
        "--db gives benchmark results for calibration, which --no-calibration turns off: give "
        "one of them");
  }
  PlannerRequest planner;
  planner.preset = parse_preset(r.methods);
  planner.pin = r.pins.pin();
  planner.host_memory_bytes_per_node = r.host_memory_gib * kGiB;
  planner.inter_node_gb_per_s = r.inter_node_gb_per_s;
  planner.cpu_adam_params_per_s = r.cpu_adam_params_per_s;
  planner.input = {parse_image_input(r.image_input), r.cpu_cores_per_gpu};
  planner.links = r.links;
  planner.error_bands = true;
  const PlannerOptions setup = planner_options(catalog, gpu.kind, planner);
  if (r.format == "table") note_constants(catalog, gpu, setup);
  PlanOptions options = setup.options;
  options.implementation = requested_implementation(r, model);
  // Benchmark trials measure the engine: they calibrate its plans only.
  const bool engine = options.implementation.code == ModelCode::kEngine;
  const std::vector<TrialRecord> trials =
      engine ? load_trials(catalog, r) : std::vector<TrialRecord>{};
  options.calibration = calibrate(trials, catalog, model, gpu.name);
  const Cluster cluster{{r.nodes, r.gpus_per_node}, &gpu};
  const PlanResult result = plan(model, cluster, options);
  PlanEvidence evidence{options.calibration, std::nullopt, setup.fitted_constants_path};
  if (result.best)
    evidence.measured_best = measured_trial(trials, model_digest(model), *result.best);
  if (!r.gpu.empty() && r.gpu != gpu.name && r.format == "table") {
    std::cerr << fmt::format("note: '{}' means {} ({})\n", r.gpu, gpu.name, gpu.display_name);
  }
  std::vector<Suggestion> suggestions;
  // More ranks on the host CPU only share it: suggestions are about GPUs.
  if (!result.best && gpu.kind == DeviceKind::kGpu) {
    suggestions = suggest_alternatives(model, cluster, catalog.gpus(), options);
  }

  const RowFormat format = parse_row_format(r.format);
  const std::vector<OpTime> ops = r.ops && result.best
                                      ? op_breakdown(model,
                                                     gpu,
                                                     result.best->config.micro_batch_size,
                                                     result.best->config.methods.free_lunch,
                                                     options)
                                      : std::vector<OpTime>{};
  if (format == RowFormat::kJson) {
    nlohmann::json out = plan_json(result, evidence, suggestions, r.all_rows);
    out["gpu_power_limit_w"] =
        gpu.power_limit_w > 0.0 ? nlohmann::json(gpu.power_limit_w) : nlohmann::json(nullptr);
    out["compute_clock_factor"] = gpu.compute_clock_factor();
    if (r.ops) out["ops"] = op_breakdown_json(ops);
    std::cout << json_text(out, 2) << "\n";
    return;
  }
  if (format != RowFormat::kTable) {  // the rows: every one with --all or when none fits
    print_plan_rows(
        std::cout, r.all_rows || !result.best ? result.rows : std::vector{*result.best}, format);
    return;
  }
  print_plan_summary(std::cout, model, gpu, result, suggestions, evidence);
  if (!ops.empty())
    print_op_breakdown(
        std::cout, ops, result.best->config.micro_batch_size, "the best configuration");
  if (r.all_rows) {
    std::cout << "\n";
    print_plan_rows(std::cout, result.rows, RowFormat::kTable);
  }
}

}  // namespace

void add_plan_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<PlanRequest>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Predict memory, fit, the fastest settings and training days for a model on GPUs, without "
      "the hardware.\nSharding names fsdp_shard_grad_op and fsdp_full_shard run the same "
      "mechanisms as zero_2 and zero_3.");
  add_model_options(*cmd, r->model, r->model_file);
  add_gpu_option(*cmd, r->gpu, "GPU name or alias, any case (see `gpudays gpus`)");
  cmd->add_option("--device",
                  r->device,
                  global.has_trainer
                      ? "cuda (a catalog GPU, --gpu) or cpu (this machine's CPU, measured once by "
                        "`gpudays trial --probe-device cpu`; the result is kept next to --db)"
                      : "cuda (a catalog GPU, --gpu) or cpu (this machine's CPU, as a LibTorch "
                        "build of gpudays measured it and kept it next to --db: this build has no "
                        "trainer to measure it)")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  add_cluster_options(*cmd,
                      r->gpus_per_node,
                      r->nodes,
                      "GPUs per node (with --device cpu: ranks sharing this machine)");
  cmd->add_option("--methods", r->methods, "Method preset: naive, free-lunch or all")
      ->capture_default_str();
  cmd->add_flag("--all", r->all_rows, "Print every configuration, not only the best");
  cmd->add_flag("--ops",
                r->ops,
                "Also list where a micro-step of the best configuration goes, operation by "
                "operation (the GPU's kernels, forward and backward; table or JSON output)");
  add_pin_options(*cmd, r->pins);
  cmd->add_option("--cluster",
                  r->cluster_file,
                  "Slurm cluster file (docs/slurm.md): its partition's GPU, GPUs per node, host "
                  "memory, links and inter-node bandwidth, where not given here")
      ->check(CLI::ExistingFile);
  cmd->add_option("--partition", r->partition, "The partition of --cluster (default: its default)");
  add_format_option(*cmd, r->format, row_format_names());
  cmd->add_option("--inter-node-gb-per-s",
                  r->inter_node_gb_per_s,
                  "Network bandwidth per node and direction, GB/s (12.5 = 100 Gb/s)")
      ->check(number_check(kMinInterNodeGbPerS, kMaxInterNodeGbPerS, /*low_open=*/false))
      ->capture_default_str();
  add_link_options(*cmd, r->links);
  cmd->get_option("--gpus-per-node")->each([r](const std::string&) {
    r->gpus_per_node_given = true;
  });
  cmd->get_option("--inter-node-gb-per-s")->each([r](const std::string&) {
    r->inter_node_given = true;
  });
  cmd->add_option("--model-code",
                  r->model_code,
                  "Whose code runs the model: engine (gpudays' trainer, the default), "
                  "huggingface (transformers' eager code), flash_attn (FlashAttention's GPT and "
                  "kernels), llama_reference (Meta's Llama code, as torchtitan), llm_c (llm.c's "
                  "CUDA; GPT-2) or mamba_ssm (mamba-ssm's kernels; Mamba): plans another stack "
                  "as it runs (docs/planner.md); benchmark calibration applies to the engine only")
      ->check(CLI::IsMember(model_code_names()))
      ->capture_default_str();
  cmd->add_flag("--compiled",
                r->compiled,
                "With --model-code: that stack under torch.compile (each pointwise chain one "
                "kernel)");
  cmd->add_option(
         "--attention-kernel",
         r->attention_kernel,
         "The fused attention's kernel: flash_attention_2 (the flash-attn package; torch's "
         "SDPA before torch 2.10), cudnn (torch's SDPA from 2.10 on Hopper and Blackwell) "
         "or flash_attention_1; default: the model code's (flash_attn: "
         "flash_attention_2; the others: cudnn). It matters on Hopper and later, where "
         "FlashAttention-2 is slower (docs/planner.md)")
      ->check(CLI::IsMember(attention_kernel_names()));
  cmd->add_option("--gpu-power-limit-w",
                  r->gpu_power_limit_w,
                  "The GPUs' power limit, W, below their TDP (nvidia-smi -pl): compute runs at "
                  "the cube root of limit / TDP of its rate (docs/planner.md, \"Power limits\"); "
                  "default: the TDP")
      ->check(CLI::Range(1.0, 100000.0));
  add_power_limit_fraction_option(*cmd, r->power_limit_fraction, /*energy=*/false)
      ->excludes("--gpu-power-limit-w");
  cmd->add_option("--cpu-adam-params-per-s",
                  r->cpu_adam_params_per_s,
                  "CPU optimizer throughput per node when offloading, parameters/s")
      ->check(number_check(kMinCpuAdamParamsPerS, kMaxCpuAdamParamsPerS, /*low_open=*/false))
      ->capture_default_str();
  cmd->add_option("--host-memory-gib",
                  r->host_memory_gib,
                  "Host memory per node for offloaded optimizer state, GiB (default: twice the "
                  "node's GPU memory, at least 64 GiB)")
      ->check(number_check(kMinHostMemoryGib, kMaxHostMemoryGib, /*low_open=*/false));
  cmd->add_option("--image-input",
                  r->image_input,
                  "Where image samples come from: packed (gpudays' trainer: decoded once), jpeg "
                  "(decoded and augmented each step), jpeg-deit (with RandAugment and random "
                  "erasing) or synthetic (no loader, as a benchmark); vision models only")
      ->check(CLI::IsMember({"synthetic", "packed", "jpeg", "jpeg-deit"}))
      ->capture_default_str()
      ->each([r](const std::string&) { r->image_input_given = true; });
  cmd->add_option("--cpu-cores-per-gpu",
                  r->cpu_cores_per_gpu,
                  "Host CPU cores per GPU for loading images (one runs the training process; "
                  "default: --cluster's CPUs per GPU, else 8)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->each([r](const std::string&) { r->cpu_cores_given = true; });
  cmd->add_option("--db",
                  r->db,
                  "Benchmark results used to calibrate step times (default: ./gpudays.db if it "
                  "exists)")
      ->each([r](const std::string&) { r->db_given = true; });
  cmd->add_flag("--no-calibration", r->no_calibration, "Ignore benchmark results");
  cmd->footer(
      "Method presets: naive = the plain path; free-lunch = TF32 (fp32 recipes, Ampere+), fused "
      "attention, the fast Mamba scan, fused AdamW and CUDA graphs; all = every valid combination "
      "of free-lunch, activation checkpointing, sharding (none, zero_1, zero_2, zero_3, "
      "fsdp_shard_grad_op, fsdp_full_shard) and offloading, each with every power-of-two "
      "micro-batch.\nExamples:\n  gpudays plan --model pythia-1b --gpu a100 --gpus-per-node 4\n"
      "  gpudays plan --model roberta --gpu rtx-3090 --gpus-per-node 8 --all --format csv\n"
      "  gpudays plan --model-file tests/data/bench-gpt-neox.toml --device cpu\n"
      "  gpudays plan --model pythia-1b --gpu a100 --gpus-per-node 4 --sharding zero_2 "
      "--checkpointing off --micro-batch-size 8   (what if: one pinned configuration)\n"
      "  gpudays plan --model pythia-160m --gpu rtx-3090 --gpus-per-node 2 --pair-bridge on   "
      "(two cards joined by their NVLink bridge)\n"
      "  gpudays plan --model mamba --gpu h100 --model-code mamba_ssm   (as another stack "
      "runs it)");
  cmd->callback([&global, r] { run_plan(global, *r); });
}

}  // namespace gpudays
