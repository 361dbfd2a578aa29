// Planner calibration from trials.
#include "accuracy/calibrate.h"

#include <algorithm>
#include <map>

#include "catalog/model_loader.h"

namespace gpudays {

Calibration calibrate(const std::vector<TrialRecord>& trials,
                      const Catalog& catalog,
                      const ModelSpec& model,
                      const std::string& gpu) {
  // The family of a trial's model: by its digest, the model itself or a catalog model.
  std::map<std::string, Family> families{{model_digest(model), model.family}};
  for (const ModelSpec& m : catalog.models()) families.emplace(model_digest(m), m.family);
  std::vector<double> ratios;
  for (const TrialRecord& t : trials) {
    if (!t.ok() || t.gpu != gpu || t.predicted_step_time_s <= 0.0) continue;
    const auto family = families.find(t.model_digest);
    const bool same_family = family != families.end() && family->second == model.family;
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
                                          const std::string& model_digest,
                                          const PlanRow& row) {
  for (const TrialRecord& t : trials) {
    if (t.ok() && t.model_digest == model_digest && t.gpu == row.gpu && t.cluster == row.cluster &&
        t.config == row.config) {
      return t;
    }
  }
  return std::nullopt;
}

}  // namespace gpudays
