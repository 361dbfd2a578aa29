// Rendering of a cost analysis: an aligned table with the frontier, query answers, assumptions and
// prices (each with its source), or CSV rows, or one JSON document.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cost/cost_analysis.h"

namespace gpudays {

struct CostReportContext {
  std::string model;
  std::string source_name;  // the TrainingTimeSource's name
  const CostOptions* cost = nullptr;
};

nlohmann::json cost_analysis_json(const CostAnalysis& analysis, const CostReportContext& context);
void print_cost_csv(std::ostream& out, const CostAnalysis& analysis);
void print_cost_table(std::ostream& out,
                      const CostAnalysis& analysis,
                      const CostReportContext& context);

}  // namespace gpudays
