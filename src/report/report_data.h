// Everything the report shows, computed once: the cost analysis of every model over the hardware
// options, and for each model x GPU at one GPU count the best configuration of each method tier
// (naive, free-lunch, all), the fastest measured trial of each cell when a results database is
// given, and the memory-saving methods comparison. Numbers come from the planner and the results
// database (both through TrainingTimeSource) and the catalog; nothing else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "advise/paper_compare.h"
#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "cost/cost_analysis.h"
#include "plan/planner.h"
#include "report/method_comparison.h"
#include "results/trial_record.h"

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
  // The fastest successful trial of the results database on this model, GPU and count (its
  // provenance in `provenance`); absent without a database or such a trial.
  std::optional<TrainingTime> measured;
  // The fastest configuration of each memory-saving method set (preset all's planner rows).
  MethodComparison methods;
  // The reference benchmark's rule on the same cell (bench --strategy reference: each method
  // set's largest fitting micro-batch, the fastest of those); absent without such trials.
  std::optional<TrainingTime> measured_reference = std::nullopt;
};

struct ReportDataOptions {
  std::vector<const ModelSpec*> models;
  std::vector<HardwareOption> hardware;  // every GPU x count (cost plots, feasibility grid)
  int64_t detail_gpu_count = 8;          // one of the counts: speed-up and GPU-days comparison
  CostOptions cost;
  PlanOptions plan;                  // preset ignored: the cost plots use all, the tiers their own
  std::string results_path;          // the results database of the measured cells; empty: none
  const Catalog* catalog = nullptr;  // with results_path: what its rows are re-derived against
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
  std::string results_path;      // empty: no database
  std::vector<std::string> measurements_left_out;  // trials not shown, each with the reason
};

// Throws InputError when detail_gpu_count is not one of the hardware counts.
ReportData collect_report_data(const ReportDataOptions& options);

// The tiers of model `model_index` on GPU `gpu_index` with `gpu_count` GPUs (one of data.counts).
const TierDetail& tier_detail(const ReportData& data,
                              size_t model_index,
                              size_t gpu_index,
                              int64_t gpu_count);

// The trials of a results database (`db_label` names it) as the report's measurements: every
// successful trial with a recorded prediction, of any model (those outside the report's models
// say so in their source); the others are listed in measurements_left_out with the reason.
void add_measurements(ReportData& data,
                      const std::vector<TrialRecord>& trials,
                      const std::string& db_label);

// The memory-saving comparison of model `model_index` on GPU `gpu_index` at detail_gpu_count.
const MethodComparison& method_comparison(const ReportData& data,
                                          size_t model_index,
                                          size_t gpu_index);

// The lightest tier that fits (index into kReportTiers), or -1 when none does.
int lightest_fitting_tier(const TierDetail& detail);
std::string tier_label(MethodPreset preset);  // "naive", "free-lunch", "memory-saving (all)"

}  // namespace gpudays
