// The cost row: one hardware option (GPU type x count) of a cost analysis, its column list once,
// for `gpudays cost` in every format and the report's costs.csv.
#pragma once

#include <vector>

#include "cost/cost_analysis.h"
#include "rows/row_format.h"

namespace gpudays {

const std::vector<Column<CostRow>>& cost_columns();

}  // namespace gpudays
