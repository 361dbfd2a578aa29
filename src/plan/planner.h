// The planner: for a model on a cluster, predicts memory, fit, step time, training days, MFU and
// HFU of every configuration of the search space, and picks the fastest that fits. Analytic; no
// LibTorch; milliseconds per request.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/model_spec.h"
#include "plan/device_model.h"
#include "plan/error_band.h"
#include "plan/input_pipeline.h"
#include "plan/memory_model.h"
#include "plan/step_figures.h"
#include "plan/time_model.h"
#include "search_space/cluster.h"
#include "search_space/search_space.h"

namespace gpudays {

// Measured step time / predicted step time for this GPU and model family, from benchmark trials.
// Scales every predicted step time; memory predictions are not calibrated.
struct Calibration {
  double step_time_factor = 1.0;
  int trials = 0;  // 0: uncalibrated
};

struct PlanOptions {
  MethodPreset preset = MethodPreset::kAll;
  ConfigurationPin pin;  // fields fixed by the caller; the search keeps what matches
  // Host memory per node for offloaded state; absent: default_host_memory_bytes(cluster).
  std::optional<double> host_memory_bytes_per_node;
  // Residual bands of the validation set (plan/error_band.h); absent: rows carry no range.
  std::shared_ptr<const ErrorBands> error_bands;
  // Whose model code, and whether compiled: the kernels behind the operations (plan/workload.h).
  // `plan` plans the project's engine; `validate` sets a published measurement's.
  Implementation implementation;
  TimeModelOptions time;
  InputOptions input;  // the host's loader (plan/input_pipeline.h)
  DeviceModelConstants device;
  MemoryModelConstants memory;
  Calibration calibration;
};

struct PlanRow {
  std::string model;
  std::string gpu;
  ClusterShape cluster;
  Configuration config;
  bool fits = false;
  std::string reason;  // why it does not fit (empty when it fits)
  MemoryBreakdown memory;
  TimeBreakdown time;
  CollectiveLink collective;  // what communication_s crosses, at which bandwidth
  double step_time_s = 0.0;   // one optimizer step of the global batch (calibrated)
  double uncalibrated_step_time_s = 0.0;
  // One repeated block's forward and backward on one GPU, kernels alone (WorkloadSummary's
  // layer_device_s): uncalibrated, outside the step's breakdown.
  double layer_time_s = 0.0;
  StepWork work;               // what one optimizer step does (plan/step_figures.h)
  double samples_per_s = 0.0;  // all GPUs together
  double tokens_per_s = 0.0;   // vision: images/s (convnext) or patches+cls tokens/s (vit)
  double training_days = 0.0;
  double gpu_days = 0.0;
  double gpu_days_ratio = 0.0;  // to the originally reported run; 0 when none is reported
  double mfu = 0.0;
  double hfu = 0.0;
  // Executed FLOPs (causal attention's skipped half excluded, recomputation included) / peak: a
  // physical fraction, never above the matmul ceiling.
  double executed_utilisation = 0.0;
  const char* matmul_dtype = "";         // what its GEMMs run in: fp32, tf32, fp16 or bf16
  double matmul_ceiling_fraction = 0.0;  // of the matmul dtype's peak (GpuSpec)
  double model_flops_per_sample = 0.0;   // forward + backward
  // The input pipeline's time for one step on one GPU; a step never takes less (input_bound).
  InputBound input;
  bool input_bound = false;  // the loader, not the GPU, sets the step time
  // The range of the step time and the training days from the nearest validation residuals,
  // widened for what is far from them (plan/error_band.h), with the band that gave it; absent
  // when the options carry no error bands.
  std::optional<ErrorBand> error_band;
  std::optional<TimeRange> step_time_range_s;
  std::optional<TimeRange> training_days_range;
  double peak_memory_bytes() const { return memory.total_bytes(); }
};

struct PlanResult {
  std::vector<PlanRow> rows;  // every configuration, in search-space order
  std::optional<PlanRow> best;
  ConfigurationPin pin;                     // what the search was restricted to
  double host_memory_bytes_per_node = 0.0;  // the limit offloaded state was checked against
  bool host_memory_is_default = true;
  Implementation implementation;  // whose model code the rows were planned as (PlanOptions')
};

PlanResult plan(const ModelSpec& model, const Cluster& cluster, const PlanOptions& options);

// The planner's order of rows, the one `plan` picks its best by: faster, then smaller peak memory.
bool faster(const PlanRow& a, const PlanRow& b);

// The first of `rows` in that order that fits and is eligible; null when none is.
const PlanRow* fastest_fitting(const std::vector<PlanRow>& rows,
                               const std::function<bool(const PlanRow&)>& eligible);

// The host memory per node a plan checks offloading against: the option, or the default.
double host_memory_limit_bytes(const Cluster& cluster, const PlanOptions& options);
// "64.0 GiB", plus how the default was chosen when the user gave none.
std::string describe_host_limit(const PlanResult& result);
// Why no configuration of `result` fits: GPU memory, or (when some configuration fits in GPU
// memory) the host memory its offloaded state needs.
std::string nothing_fits_reason(const PlanResult& result, const GpuSpec& gpu);

// Predicts ONE configuration, pinned by the caller, with the same evaluation as plan() (and its
// executed-FLOPs ceiling check). The search space's batch rule does not apply: any micro-batch and
// accumulation are evaluated as long as micro-batch x accumulation x GPUs equals the recipe's
// global batch. Throws InputError only for what is physically meaningless: counts below 1 or past
// the planner's bounds, a batch that does not multiply out, bf16 on a GPU without it, offloading
// without sharding. A configuration that does not fit is returned with fits = false and the reason.
PlanRow plan_configuration(const ModelSpec& model,
                           const Cluster& cluster,
                           const Configuration& config,
                           const PlanOptions& options);

}  // namespace gpudays
