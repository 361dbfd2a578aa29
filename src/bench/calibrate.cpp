// Planner calibration from trials.
#include "bench/calibrate.h"

#include <algorithm>

namespace gpudays {
namespace {

std::optional<Family> family_of(const Catalog& catalog, const std::string& model) {
  for (const ModelSpec& m : catalog.models()) {
    if (m.name == model) return m.family;
  }
  return std::nullopt;
}

}  // namespace

Calibration calibrate(const std::vector<TrialRecord>& trials, const Catalog& catalog,
                      const ModelSpec& model, const std::string& gpu) {
  std::vector<double> ratios;
  for (const TrialRecord& t : trials) {
    if (t.status != TrialStatus::kOk || t.gpu != gpu || t.predicted_step_time_s <= 0.0) continue;
    const bool same_family =
        t.model == model.name || family_of(catalog, t.model) == std::optional(model.family);
    if (same_family) ratios.push_back(t.step_time_median_s / t.predicted_step_time_s);
  }
  Calibration c;
  if (ratios.empty()) return c;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  c.step_time_factor = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
  c.trials = static_cast<int>(n);
  return c;
}

std::optional<TrialRecord> measured_trial(const std::vector<TrialRecord>& trials,
                                          const PlanRow& row) {
  const MethodSet& m = row.config.methods;
  for (const TrialRecord& t : trials) {
    if (t.status == TrialStatus::kOk && t.model == row.model && t.gpu == row.gpu &&
        t.num_nodes == row.num_nodes && t.gpus_per_node == row.gpus_per_node &&
        t.micro_batch_size == row.config.micro_batch_size && t.free_lunch == m.free_lunch &&
        t.activation_checkpointing == m.activation_checkpointing &&
        t.sharding == to_string(m.sharding) && t.offloading == m.offloading) {
      return t;
    }
  }
  return std::nullopt;
}

}  // namespace gpudays
