// Planner calibration from trials.
#include "accuracy/calibrate.h"

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

Calibration calibrate(const std::vector<TrialRecord>& trials,
                      const Catalog& catalog,
                      const ModelSpec& model,
                      const std::string& gpu) {
  std::vector<double> ratios;
  for (const TrialRecord& t : trials) {
    if (!t.ok() || t.gpu != gpu || t.predicted_step_time_s <= 0.0) continue;
    const bool same_family =
        t.model == model.name || family_of(catalog, t.model) == std::optional(model.family);
    const double ratio = t.step_time_s() / t.predicted_step_time_s;
    if (same_family && ratio >= 1.0 / kMaxCalibrationRatio && ratio <= kMaxCalibrationRatio) {
      ratios.push_back(ratio);
    }
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
  for (const TrialRecord& t : trials) {
    if (t.ok() && t.model == row.model && t.gpu == row.gpu && t.cluster == row.cluster &&
        t.config == row.config) {
      return t;
    }
  }
  return std::nullopt;
}

}  // namespace gpudays
