// Rendering of planner results: JSON objects, table and CSV rows, and the best-row summary.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/planner.h"
#include "plan/suggest.h"
#include "results/trial_record.h"

namespace gpudays {

nlohmann::json plan_row_json(const PlanRow& row);

void print_plan_rows_table(std::ostream& out, const std::vector<PlanRow>& rows, bool csv);
// What the benchmark results add to a plan: the calibration used, and the measured trial of the
// best configuration when there is one.
struct PlanEvidence {
  Calibration calibration;
  std::optional<TrialRecord> measured_best;
};

void print_plan_summary(std::ostream& out, const ModelSpec& model, const GpuSpec& gpu,
                        const PlanResult& result, const std::vector<Suggestion>& suggestions,
                        const PlanEvidence& evidence);

}  // namespace gpudays
