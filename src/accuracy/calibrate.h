// Calibration of the planner from benchmark results: the median of measured / predicted step time
// over the successful trials on the same GPU and model family whose ratio is plausible; and the
// measured trial of a given
// configuration, to show next to its prediction.
#pragma once

#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "plan/planner.h"
#include "results/trial_record.h"

namespace gpudays {

// A measured / predicted ratio beyond this factor either way is not a planner error but a broken
// measurement (or a wrong catalog GPU): such trials are left out of the calibration.
constexpr double kMaxCalibrationRatio = 4.0;

Calibration calibrate(const std::vector<TrialRecord>& trials,
                      const Catalog& catalog,
                      const ModelSpec& model,
                      const std::string& gpu);

// The successful trial of the row's configuration of the model of `model_digest`, if any.
std::optional<TrialRecord> measured_trial(const std::vector<TrialRecord>& trials,
                                          const std::string& model_digest,
                                          const PlanRow& row);

}  // namespace gpudays
