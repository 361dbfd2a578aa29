// The fit of the planner's efficiency constants (plan/fitted_constants.h) to the fitting half of
// the published measurements: a coordinate search over each constant's grid, within its physical
// bounds, minimising the fitting half's MAPE. Deterministic; it refuses any case of the checking
// half, so the checking half stays an honest test.
#pragma once

#include <string>
#include <vector>

#include "catalog/calibration_file.h"
#include "catalog/measurement.h"
#include "plan/planner.h"

namespace gpudays {

class Catalog;

struct FitOptions {
  int max_passes = 8;    // coordinate passes; the search stops earlier when a pass changes nothing
  bool restarts = true;  // also search from every constant's lower bound, midpoint, upper bound
};

struct CalibrationFit {
  PlanOptions options;                   // the start, with the fitted values set
  std::vector<CalibrationValue> values;  // every fitted constant, in the table's order
  int fit_cases = 0;                     // trusted cases planned
  double fit_mape_before = 0.0;          // with the start's constants
  double fit_mape_after = 0.0;
  int passes = 0;
};

// Fits every constant of fitted_constants() on `fit_half`, starting from `start`'s values (which
// must lie within the bounds). Throws InputError when a case is not of the fitting half or no
// case can be planned.
CalibrationFit fit_calibration(const std::vector<Measurement>& fit_half,
                               const Catalog& catalog,
                               const PlanOptions& start,
                               const FitOptions& options = {});

// configs/calibration.toml as `gpudays validate --fit` prints it: the fit on the fitting half
// from the planner's own constants, both halves' MAPE before and after in its header.
std::string fitted_calibration_toml(const Catalog& catalog);

// Every value of fitted_constants() grid: min, min + step, ..., max (rounded to 1e-9).
std::vector<double> constant_grid(double min, double max, double step);

}  // namespace gpudays
