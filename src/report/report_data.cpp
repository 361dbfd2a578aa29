// Collecting the report's numbers from the planner and the cost model.
#include "report/report_data.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/error.h"
#include "cost/hardware_cost.h"

namespace gpudays {
namespace {

std::vector<const GpuSpec*> distinct_gpus(const std::vector<HardwareOption>& hardware) {
  std::vector<const GpuSpec*> gpus;
  for (const HardwareOption& h : hardware) {
    if (std::find(gpus.begin(), gpus.end(), h.gpu) == gpus.end()) gpus.push_back(h.gpu);
  }
  return gpus;
}

std::vector<int64_t> distinct_counts(const std::vector<HardwareOption>& hardware) {
  std::vector<int64_t> counts;
  for (const HardwareOption& h : hardware) counts.push_back(h.gpu_count);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::unique_ptr<TrainingTimeSource> plan_source(const PlanOptions& base, MethodPreset preset) {
  TimeSourceOptions options;
  options.kind = TimeSourceKind::kPlan;
  options.plan = base;
  options.plan.preset = preset;
  return make_time_source(options);
}

}  // namespace

ReportData collect_report_data(const ReportDataOptions& options) {
  ReportData data;
  data.models = options.models;
  data.gpus = distinct_gpus(options.hardware);
  data.counts = distinct_counts(options.hardware);
  data.detail_gpu_count = options.detail_gpu_count;
  if (std::find(data.counts.begin(), data.counts.end(), data.detail_gpu_count) ==
      data.counts.end()) {
    throw InputError(
        fmt::format("--detail-gpus {} must be one of --counts", data.detail_gpu_count));
  }
  data.cost = options.cost;
  std::vector<std::unique_ptr<TrainingTimeSource>> tier_sources;
  for (MethodPreset preset : kReportTiers)
    tier_sources.push_back(plan_source(options.plan, preset));
  const TrainingTimeSource& all_source = *tier_sources.back();
  std::unique_ptr<TrainingTimeSource> measured_source;
  std::unique_ptr<TrainingTimeSource> reference_source;
  if (!options.results_path.empty()) {
    if (options.catalog == nullptr) throw std::logic_error("report measurements without a catalog");
    measured_source = make_bench_time_source(options.results_path, *options.catalog);
    reference_source =
        make_bench_time_source(options.results_path, *options.catalog, MeasurementRule::kReference);
    data.results_path = options.results_path;
  }
  data.cost_time_source = all_source.name();
  for (const ModelSpec* model : options.models) {
    data.costs.push_back(analyse_costs(*model, options.hardware, all_source, options.cost));
    for (const GpuSpec* gpu : data.gpus) {
      for (int64_t count : data.counts) {
        const ClusterShape layout = machine_layout(count, options.cost.assumptions.base_machines);
        TierDetail detail{model->name, gpu->name, layout, {}, std::nullopt, {}};
        for (size_t t = 0; t < kReportTierCount; ++t) {
          detail.tiers[t] = tier_sources[t]->training_time(*model, *gpu, layout);
        }
        if (measured_source) {
          TrainingTime m = measured_source->training_time(*model, *gpu, layout);
          if (m.fits) detail.measured = std::move(m);
          TrainingTime r = reference_source->training_time(*model, *gpu, layout);
          if (r.fits) detail.measured_reference = std::move(r);
        }
        detail.methods = compare_memory_methods(*model, *gpu, layout, options.plan);
        data.details.push_back(std::move(detail));
      }
    }
  }
  return data;
}

const TierDetail& tier_detail(const ReportData& data,
                              size_t model_index,
                              size_t gpu_index,
                              int64_t gpu_count) {
  const auto it = std::find(data.counts.begin(), data.counts.end(), gpu_count);
  if (it == data.counts.end()) throw std::out_of_range("tier_detail: count not in the report");
  const size_t k = static_cast<size_t>(it - data.counts.begin());
  return data.details.at((model_index * data.gpus.size() + gpu_index) * data.counts.size() + k);
}

void add_measurements(ReportData& data,
                      const std::vector<TrialRecord>& trials,
                      const std::string& db_label) {
  std::map<std::string, int> failed;       // status -> trials
  std::map<std::string, int> unpredicted;  // model -> successful trials without a prediction
  for (const TrialRecord& t : trials) {
    if (!t.ok()) {
      ++failed[to_string(t.measured.status)];
      continue;
    }
    if (t.predicted_step_time_s <= 0.0) {
      ++unpredicted[t.model];
      continue;
    }
    const bool reported =
        std::any_of(data.models.begin(), data.models.end(), [&](const ModelSpec* m) {
          return model_digest(*m) == t.model_digest;
        });
    data.measurements.push_back(MeasuredRun{
        t.model,
        t.gpu,
        t.cluster.world_size(),
        t.predicted_step_time_s,
        t.step_time_s(),
        fmt::format("{} row '{}' ({}){}",
                    db_label,
                    t.key(),
                    t.created_at,
                    reported ? "" : "; a model outside this report's models (not in its tables)")});
  }
  for (const auto& [status, n] : failed) {
    data.measurements_left_out.push_back(
        fmt::format("{} trial{} of {} with status {}: not successful, so no step time to show.",
                    n,
                    n == 1 ? "" : "s",
                    db_label,
                    status));
  }
  for (const auto& [model, n] : unpredicted) {
    data.measurements_left_out.push_back(
        fmt::format("{} successful trial{} of {} in {} without a recorded prediction (run "
                    "without the planner's estimate), so no predicted step time to compare.",
                    n,
                    n == 1 ? "" : "s",
                    model,
                    db_label));
  }
}

const MethodComparison& method_comparison(const ReportData& data,
                                          size_t model_index,
                                          size_t gpu_index) {
  return tier_detail(data, model_index, gpu_index, data.detail_gpu_count).methods;
}

int lightest_fitting_tier(const TierDetail& detail) {
  for (size_t t = 0; t < kReportTierCount; ++t) {
    if (detail.tiers[t].fits) return static_cast<int>(t);
  }
  return -1;
}

std::string tier_label(MethodPreset preset) {
  switch (preset) {
    case MethodPreset::kNaive:
      return "naive";
    case MethodPreset::kFreeLunch:
      return "free-lunch";
    case MethodPreset::kAll:
      return "memory-saving (all)";
  }
  return "?";
}

}  // namespace gpudays
