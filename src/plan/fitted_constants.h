// The planner's efficiency constants that are fitted to published measurements: each
// one's name, physical bounds, grid step and meaning, read and written by name on PlanOptions.
// Their values live in configs/calibration.toml (catalog/calibration_file.h reads it); the fit
// itself is accuracy/calibration_fit.h's.
#pragma once

#include <string>
#include <vector>

#include "catalog/calibration_file.h"
#include "plan/planner.h"

namespace gpudays {

struct FittedConstant {
  std::string name;  // e.g. "matmul_fraction_of_ceiling.sm_80", "memory_efficiency"
  double min = 0.0;  // physical bounds, both inclusive
  double max = 0.0;
  double step = 0.0;  // grid spacing of the fit
  std::string meaning;
};

// Every fitted constant, in the fit's order (a plain table).
const std::vector<FittedConstant>& fitted_constants();

// The constant's value in `options`; throws InputError naming the valid names.
double constant_value(const PlanOptions& options, const std::string& name);
// Sets it; throws InputError for an unknown name or a value outside its bounds.
void set_constant(PlanOptions& options, const std::string& name, double value);

// Sets every value of the calibration file on `options`; errors name the file and the constant.
void apply_calibration(const CalibrationFile& file, PlanOptions& options);

// PlanOptions{} with the catalog's calibration applied: what the commands plan with.
PlanOptions calibrated_plan_options(const CalibrationFile& file);

}  // namespace gpudays
