// How `gpudays validate` prints its report (accuracy/validate.h): the cases as a table or CSV,
// the summaries by GPU and split, the worst and the unplanned cases, or one JSON document.
#pragma once

#include <ostream>
#include <string>

#include "accuracy/validate.h"
#include "rows/table.h"

namespace gpudays {

Table cases_table(const ValidationReport& report);
void print_table(std::ostream& out, const ValidationReport& report);
// `calibration_path`: the constants planned with (empty: the planner's own).
void print_json(std::ostream& out,
                const ValidationReport& report,
                const std::string& calibration_path);

}  // namespace gpudays
