// Everything the report shows, computed once: the cost analysis of every model over the hardware
// options, and for each model x GPU at one GPU count the best configuration of each method tier
// (naive, free-lunch, all). Numbers come only from the planner (through TrainingTimeSource) and
// the catalog; measurements are passed in (none exist yet).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "advise/paper_compare.h"
#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "cost/cost_analysis.h"
#include "plan/planner.h"

namespace gpudays {

// One benchmark measurement next to the planner's prediction for the same hardware and settings.
struct MeasuredRun {
  std::string model;
  std::string gpu;
  int64_t gpu_count = 1;
  double predicted_step_time_s = 0.0;
  double measured_step_time_s = 0.0;
  std::string source;  // the results row it came from
};

// The three method tiers of the feasibility grid and the speed-up plot, lightest first.
inline constexpr MethodPreset kReportTiers[] = {
    MethodPreset::kNaive, MethodPreset::kFreeLunch, MethodPreset::kAll};
inline constexpr size_t kReportTierCount = 3;

struct TierDetail {
  std::string model;
  std::string gpu;
  ClusterShape layout;
  TrainingTime tiers[kReportTierCount];  // naive, free-lunch, all
};

struct ReportDataOptions {
  std::vector<const ModelSpec*> models;
  std::vector<HardwareOption> hardware;  // every GPU x count (cost plots, feasibility grid)
  int64_t detail_gpu_count = 8;          // one of the counts: speed-up and GPU-days comparison
  CostOptions cost;
  PlanOptions plan;  // preset ignored: the cost plots use all, the tiers their own
};

struct ReportData {
  std::vector<const ModelSpec*> models;
  std::vector<const GpuSpec*> gpus;  // in the order of the hardware options
  std::vector<int64_t> counts;       // ascending
  std::vector<CostAnalysis> costs;   // one per model
  std::vector<TierDetail> details;   // one per model x GPU x count; use tier_detail()
  int64_t detail_gpu_count = 8;
  std::string cost_time_source;  // name of the time source of the cost plots
  CostOptions cost;
  std::vector<MeasuredRun> measurements;
  std::vector<PaperCell> paper;  // the reference paper's figures beside ours (paper_section.h)
};

// Throws InputError when detail_gpu_count is not one of the hardware counts.
ReportData collect_report_data(const ReportDataOptions& options);

// The tiers of model `model_index` on GPU `gpu_index` with `gpu_count` GPUs (one of data.counts).
const TierDetail& tier_detail(const ReportData& data,
                              size_t model_index,
                              size_t gpu_index,
                              int64_t gpu_count);

// The lightest tier that fits (index into kReportTiers), or -1 when none does.
int lightest_fitting_tier(const TierDetail& detail);
std::string tier_label(MethodPreset preset);  // "naive", "free-lunch", "memory-saving (all)"

}  // namespace gpudays
