// Planner: evaluates each configuration from cached per-micro-batch workload summaries.
#include "plan/planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "catalog/param_count.h"
#include "common/error.h"
#include "common/units.h"

namespace gpudays {
namespace {

std::string no_fit_reason(const MemoryBreakdown& memory, const GpuSpec& gpu) {
  return fmt::format("needs {} per GPU, has {}",
                     format_gib(memory.least_bytes()),
                     format_gib(static_cast<double>(gpu.memory_bytes)));
}

std::string no_host_fit_reason(const MemoryBreakdown& memory, double host_limit_bytes) {
  return fmt::format("offloading needs {} of host memory per node, has {}",
                     format_gib(memory.host_bytes),
                     format_gib(host_limit_bytes));
}

// Beyond this a plan means nothing (2.7 billion years); only a figure near 0 somewhere (a flag, a
// GPU, cluster or model file) leads past it, or to a time that is not finite.
constexpr double kMaxTrainingDays = 1e12;

// The largest part of a step (one that is not finite first) and what sets it, to name the figure
// to check.
std::string largest_part(const TimeBreakdown& t) {
  const std::pair<double, const char*> parts[] = {
      {t.compute_s + t.recompute_s, "compute (the GPU's peaks and memory bandwidth)"},
      {t.communication_s, "communication (the GPU's links, the network between nodes)"},
      {t.offload_s, "offloading (the host link, the CPU optimizer's rate)"},
      {t.optimizer_s, "the optimizer step (the GPU's memory bandwidth)"}};
  const std::pair<double, const char*>* most = &parts[0];
  for (const auto& part : parts) {
    if (!std::isfinite(part.first)) return fmt::format("{} at {} s", part.second, part.first);
    if (part.first > most->first) most = &part;
  }
  return fmt::format("{} at {:.3g} s", most->second, most->first);
}

// The last check of a row: never a row of inf or of hundreds of digits, but an error naming the
// step's largest part.
void check_plausible_time(const PlanRow& row) {
  if (std::isfinite(row.step_time_s) && row.step_time_s > 0.0 &&
      row.training_days <= kMaxTrainingDays) {
    return;
  }
  throw InputError(fmt::format(
      "{} on {} x {} ({}): a step would take {:.3g} s ({:.3g} days to train, more than {:g}); the "
      "largest part is {}: check the figures it comes from",
      row.model,
      row.cluster.world_size(),
      row.gpu,
      describe(row.config),
      row.step_time_s,
      row.training_days,
      kMaxTrainingDays,
      largest_part(row.time)));
}

PlanRow evaluate(const ModelSpec& model,
                 const Cluster& cluster,
                 const Configuration& config,
                 double params,
                 const WorkloadSummary& w,
                 const DeviceModel& device,
                 const PlanOptions& options) {
  const Precision precision = model.recipe.precision;
  PlanRow row;
  row.model = model.name;
  row.gpu = cluster.gpu->name;
  row.cluster = cluster.shape();
  row.config = config;
  MemoryModelConstants memory = options.memory;
  const bool engine = options.implementation.code == ModelCode::kEngine;
  memory.cuda_graphs = engine;
  const bool frees = engine ? engine_frees_gradients(config.methods, cluster)
                            : options.memory.stack_frees_gradients;
  memory.gradients_allocated_in_backward = frees && config.grad_acc_steps == 1;
  memory.all_reduce_bucket_bytes = engine ? static_cast<double>(kAllReduceBucketBytes) : 0.0;
  memory.optimizer_buffers = engine ? engine_optimizer_buffers(model.recipe, config.methods) : 0.0;
  memory.fp32_gradient_shard_copies = engine;
  memory.root_unit_gradients_whole = engine || options.memory.root_unit_gradients_whole;
  memory.root_gradients_flattened = engine;
  memory.root_unit_gathered = engine;
  row.memory = predict_memory(params, precision, config.methods, cluster, w, memory);
  TimeModelOptions time = options.time;
  if (model.recipe.weight_decay > 0.0) {
    time.weight_decay = model.recipe.optimizer == OptimizerKind::kAdamW ? WeightDecay::kDecoupled
                                                                        : WeightDecay::kL2;
  }
  row.time = predict_step_time(
      params, precision, config.methods, cluster, config.grad_acc_steps, w, device, time);
  row.collective = collective_link(cluster, options.time);
  row.fits = row.memory.least_bytes() <= static_cast<double>(cluster.gpu->memory_bytes);
  if (!row.fits) row.reason = no_fit_reason(row.memory, *cluster.gpu);
  const double host_limit = host_memory_limit_bytes(cluster, options);
  if (row.fits && row.memory.host_bytes > host_limit) {
    row.fits = false;
    row.reason = no_host_fit_reason(row.memory, host_limit);
  }
  row.uncalibrated_step_time_s = row.time.step_s();
  row.layer_time_s = w.layer_device_s;
  const double global_batch = static_cast<double>(model.recipe.global_batch);
  const double world = static_cast<double>(cluster.world_size());
  row.model_flops_per_sample = w.model_flops / static_cast<double>(w.samples);
  const double step_flops = row.model_flops_per_sample * global_batch;
  const bool recomputes = config.methods.activation_checkpointing;
  const double exec_step_flops =
      (w.exec_flops + (recomputes ? w.recompute_exec_flops : 0.0)) / w.samples * global_batch;
  // Calibration may not make a configuration faster than the matmul ceiling allows for the FLOPs
  // its kernels execute (at the clock its power limit leaves).
  const double ceiling_step_s =
      exec_step_flops / (world * device.ceiling_flops() * cluster.gpu->compute_clock_factor());
  row.step_time_s = std::max(row.uncalibrated_step_time_s * options.calibration.step_time_factor,
                             std::min(row.uncalibrated_step_time_s, ceiling_step_s));
  // The loader's workers prepare the next batches while the GPU runs: the slower of the two.
  row.input = input_bound(is_vision(model.family), global_batch / world, options.input);
  row.input.device_step_time_s = row.step_time_s;
  if (row.input.applies && row.input.step_time_s > row.step_time_s) {
    row.step_time_s = row.input.step_time_s;
    row.input_bound = true;
  }
  const double recompute = recomputes ? w.recompute_flops / w.samples * global_batch : 0.0;
  row.work = {global_batch,
              static_cast<double>(w.tokens_per_sample),
              step_flops,
              recompute,
              static_cast<double>(model.recipe.train_steps),
              world,
              device.peak_flops()};
  const StepFigures figures = step_figures(row.work, row.step_time_s);
  row.samples_per_s = figures.samples_per_s;
  row.tokens_per_s = figures.tokens_per_s;
  row.training_days = figures.training_days;
  check_plausible_time(row);
  if (options.error_bands) {
    row.error_band = options.error_bands->for_point({cluster.gpu->name,
                                                     cluster.gpu->architecture,
                                                     to_string(model.family),
                                                     cluster.world_size(),
                                                     params,
                                                     to_string(options.implementation.code)});
    row.step_time_range_s = row.error_band->range(row.step_time_s);
    row.training_days_range = row.error_band->range(row.training_days);
  }
  row.gpu_days = figures.gpu_days;
  if (model.reported_gpu_days() > 0) row.gpu_days_ratio = row.gpu_days / model.reported_gpu_days();
  row.mfu = figures.mfu;
  row.hfu = figures.hfu;
  const double capacity = row.step_time_s * world * device.peak_flops();
  // MFU counts attention whole (PaLM's definition), so with causal fused attention it can pass
  // the ceiling on long sequences; the executed FLOPs cannot.
  row.executed_utilisation = exec_step_flops / capacity;
  row.matmul_dtype = device.matmul_dtype();
  row.matmul_ceiling_fraction = device.ceiling_fraction();
  if (row.executed_utilisation > row.matmul_ceiling_fraction * (1.0 + 1e-9)) {
    throw std::logic_error(
        fmt::format("planner bug: {} on {} predicts executed FLOPs at {:.3f} of "
                    "peak, above the matmul ceiling {:.3f}",
                    model.name,
                    cluster.gpu->name,
                    row.executed_utilisation,
                    row.matmul_ceiling_fraction));
  }
  return row;
}

WorkloadSummary summarize_micro_batch(const ModelSpec& model,
                                      int64_t micro_batch,
                                      bool free_lunch,
                                      const Implementation& implementation,
                                      const GpuSpec& gpu,
                                      const DeviceModel& device) {
  return summarize(build_workload(model,
                                  planned_workload_options(
                                      model, micro_batch, free_lunch, implementation, gpu.kind)),
                   device);
}

}  // namespace

bool faster(const PlanRow& a, const PlanRow& b) {
  if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
  return a.memory.least_bytes() < b.memory.least_bytes();
}

const PlanRow* fastest_fitting(const std::vector<PlanRow>& rows,
                               const std::function<bool(const PlanRow&)>& eligible) {
  const PlanRow* best = nullptr;
  for (const PlanRow& row : rows) {
    if (row.fits && eligible(row) && (best == nullptr || faster(row, *best))) best = &row;
  }
  return best;
}

PlanResult plan(const ModelSpec& model, const Cluster& cluster, const PlanOptions& options) {
  const std::vector<Configuration> configs =
      enumerate_configs(model, cluster, options.preset, options.pin);
  const double params = static_cast<double>(count_params(model).total);
  const Precision precision = model.recipe.precision;
  const bool tf32 = options.implementation.tf32;
  const DeviceModel plain(*cluster.gpu, precision, /*free_lunch=*/false, options.device, tf32);
  const DeviceModel free_lunch(*cluster.gpu, precision, /*free_lunch=*/true, options.device, tf32);

  std::map<std::pair<bool, int64_t>, WorkloadSummary> summaries;
  PlanResult result;
  result.pin = options.pin;
  result.host_memory_bytes_per_node = host_memory_limit_bytes(cluster, options);
  result.host_memory_is_default = !options.host_memory_bytes_per_node.has_value();
  result.implementation = options.implementation;
  for (const Configuration& config : configs) {
    const bool fl = config.methods.free_lunch;
    const DeviceModel& device = fl ? free_lunch : plain;
    auto key = std::make_pair(fl, config.micro_batch_size);
    auto it = summaries.find(key);
    if (it == summaries.end()) {
      it = summaries
               .emplace(key,
                        summarize_micro_batch(model,
                                              config.micro_batch_size,
                                              fl,
                                              options.implementation,
                                              *cluster.gpu,
                                              device))
               .first;
    }
    PlanRow row = evaluate(model, cluster, config, params, it->second, device, options);
    if (row.fits && (!result.best || faster(row, *result.best))) result.best = row;
    result.rows.push_back(std::move(row));
  }
  return result;
}

double host_memory_limit_bytes(const Cluster& cluster, const PlanOptions& options) {
  return options.host_memory_bytes_per_node.value_or(default_host_memory_bytes(cluster));
}

std::string describe_host_limit(const PlanResult& result) {
  return fmt::format("{}{}",
                     format_gib(result.host_memory_bytes_per_node),
                     result.host_memory_is_default
                         ? " (the default: twice the node's GPU memory, at least 64 GiB)"
                         : "");
}

std::string nothing_fits_reason(const PlanResult& result, const GpuSpec& gpu) {
  double least = result.rows.front().memory.least_bytes();
  std::optional<double> least_host;
  for (const PlanRow& r : result.rows) {
    least = std::min(least, r.memory.least_bytes());
    if (r.memory.least_bytes() <= static_cast<double>(gpu.memory_bytes)) {
      least_host = std::min(least_host.value_or(r.memory.host_bytes), r.memory.host_bytes);
    }
  }
  if (least_host) {
    return fmt::format(
        "the configurations that fit in GPU memory offload {} or more to host "
        "memory per node, which has {}",
        format_gib(*least_host),
        describe_host_limit(result));
  }
  return fmt::format("the leanest configuration needs {} per GPU, the {} has {}",
                     format_gib(least),
                     gpu.name,
                     format_gib(static_cast<double>(gpu.memory_bytes)));
}

PlanRow plan_configuration(const ModelSpec& model,
                           const Cluster& cluster,
                           const Configuration& config,
                           const PlanOptions& options) {
  if (cluster.gpu == nullptr) throw InputError("no GPU given");
  if (cluster.gpus_per_node < 1 || cluster.gpus_per_node > kMaxGpusPerNode ||
      cluster.num_nodes < 1 || cluster.num_nodes > kMaxNodes) {
    throw InputError(fmt::format("{} nodes x {} GPUs per node is outside 1..{} x 1..{}",
                                 cluster.num_nodes,
                                 cluster.gpus_per_node,
                                 kMaxNodes,
                                 kMaxGpusPerNode));
  }
  if (config.micro_batch_size < 1 || config.grad_acc_steps < 1) {
    throw InputError(fmt::format("micro-batch {} and accumulation {} must be at least 1",
                                 config.micro_batch_size,
                                 config.grad_acc_steps));
  }
  const int64_t world = cluster.world_size();
  if (config.micro_batch_size * config.grad_acc_steps * world != model.recipe.global_batch) {
    throw InputError(fmt::format(
        "micro-batch {} x accumulation {} x {} GPUs = {} samples, but the global batch of {} is {}",
        config.micro_batch_size,
        config.grad_acc_steps,
        world,
        config.micro_batch_size * config.grad_acc_steps * world,
        model.name,
        model.recipe.global_batch));
  }
  const Precision precision = model.recipe.precision;
  const std::string precision_issue =
      precision_problem(precision, cluster.gpu->display_name, cluster.gpu->compute_capability);
  if (!precision_issue.empty())
    throw InputError(fmt::format("{}: {}", model.name, precision_issue));
  if (config.methods.offloading && config.methods.sharding == Sharding::kNone) {
    throw InputError("offloading needs sharding");
  }
  const double params = static_cast<double>(count_params(model).total);
  const DeviceModel device(*cluster.gpu,
                           precision,
                           config.methods.free_lunch,
                           options.device,
                           options.implementation.tf32);
  const WorkloadSummary w = summarize_micro_batch(model,
                                                  config.micro_batch_size,
                                                  config.methods.free_lunch,
                                                  options.implementation,
                                                  *cluster.gpu,
                                                  device);
  return evaluate(model, cluster, config, params, w, device, options);
}

}  // namespace gpudays
