// Calibration of the planner from benchmark results: the median of measured / predicted step time
// over the successful trials on the same GPU and model family; and the measured trial of a given
// configuration, to show next to its prediction.
#pragma once

#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "plan/planner.h"
#include "results/trial_record.h"

namespace gpudays {

Calibration calibrate(const std::vector<TrialRecord>& trials, const Catalog& catalog,
                      const ModelSpec& model, const std::string& gpu);

std::optional<TrialRecord> measured_trial(const std::vector<TrialRecord>& trials,
                                          const PlanRow& row);

}  // namespace gpudays
