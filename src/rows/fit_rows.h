// `gpudays fit` output: the fit row's one column list, the table with its answers, the JSON
// document.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "advise/fit.h"
#include "rows/row_format.h"

namespace gpudays {

const std::vector<Column<FitRow>>& fit_columns();

// What `fit` was asked and answered, for the table's sentences and the JSON document.
struct FitReport {
  std::string question;           // one line: the hardware or model and the limits
  std::vector<FitRow> rows;       // catalog rows, or hardware options within the limits
  std::optional<FitRow> largest;  // compute-optimal answer (hardware mode: none)
  std::string family;             // the compute-optimal family's template, when asked
  double tokens_per_param = 0.0;
  bool hardware_mode = false;
  std::string written_model;  // the file the largest model was written to, when asked
};

void print_fit(std::ostream& out, const FitReport& report, RowFormat format);

}  // namespace gpudays
