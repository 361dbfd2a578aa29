// Rendering of planner results: the plan row's columns (every format), the JSON document, and
// the best-row summary.
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
#include "rows/row_format.h"

namespace gpudays {

// The plan row: one configuration on one cluster, as every format prints it.
const std::vector<Column<PlanRow>>& plan_columns();
nlohmann::json plan_row_json(const PlanRow& row);
void print_plan_rows(std::ostream& out, const std::vector<PlanRow>& rows, RowFormat format);
// What the benchmark results add to a plan: the calibration used, and the measured trial of the
// best configuration when there is one.
struct PlanEvidence {
  Calibration calibration;
  std::optional<TrialRecord> measured_best;
  std::string fitted_constants_path;  // the calibration file planned with; empty: none
};

// `plan --format json`: the best row, the calibration, the measured best, every row (all_rows) and
// the suggestions, after json_document's schema version and build.
nlohmann::json plan_json(const PlanResult& result,
                         const PlanEvidence& evidence,
                         const std::vector<Suggestion>& suggestions,
                         bool all_rows);

void print_plan_summary(std::ostream& out,
                        const ModelSpec& model,
                        const GpuSpec& gpu,
                        const PlanResult& result,
                        const std::vector<Suggestion>& suggestions,
                        const PlanEvidence& evidence);

}  // namespace gpudays
