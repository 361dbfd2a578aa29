// Rendering of planner results: JSON objects, table and CSV rows, and the best-row summary.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/planner.h"
#include "plan/suggest.h"

namespace gpudays {

nlohmann::json plan_row_json(const PlanRow& row);
void print_plan_rows_table(std::ostream& out, const std::vector<PlanRow>& rows, bool csv);
void print_plan_summary(std::ostream& out, const ModelSpec& model, const GpuSpec& gpu,
                        const PlanResult& result, const std::vector<Suggestion>& suggestions);

}  // namespace gpudays
