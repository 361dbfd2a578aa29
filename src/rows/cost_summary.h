// Rendering of a cost analysis: an aligned table with the frontier, query answers, assumptions and
// prices (each with its source); the rows in any format; one JSON document.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cost/cost_analysis.h"
#include "rows/row_format.h"

namespace gpudays {

struct CostReportContext {
  std::string model;
  std::string source_name;  // the TrainingTimeSource's name
  const CostOptions* cost = nullptr;
};

nlohmann::json cost_analysis_json(const CostAnalysis& analysis, const CostReportContext& context);
// The rows in CSV, JSONL, Markdown or a plain table (the --format table view is print_cost_table).
void print_cost_rows(std::ostream& out, const CostAnalysis& analysis, RowFormat format);
void print_cost_table(std::ostream& out,
                      const CostAnalysis& analysis,
                      const CostReportContext& context);

}  // namespace gpudays
