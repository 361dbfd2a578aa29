// Coordinate search of the fitted constants over their grids, on the fitting half only.
#include "accuracy/calibration_fit.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "accuracy/validate.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "plan/fitted_constants.h"

namespace gpudays {
namespace {

// A change must improve the MAPE by more than rounding noise to be taken.
constexpr double kMinImprovement = 1e-12;

double fit_mape(const std::vector<Measurement>& cases,
                const Catalog& catalog,
                const PlanOptions& options) {
  ValidationOptions validation;
  validation.worst = 0;
  return validate(cases, catalog, options, validation).overall.mape;
}

// One coordinate: the grid value with the lowest MAPE (the current one on ties). Returns whether
// the value changed.
bool fit_one(const FittedConstant& c,
             const std::vector<Measurement>& cases,
             const Catalog& catalog,
             PlanOptions& options,
             double& mape) {
  const double current = constant_value(options, c.name);
  double best = current;
  for (double v : constant_grid(c.min, c.max, c.step)) {
    set_constant(options, c.name, v);
    const double m = fit_mape(cases, catalog, options);
    if (m < mape - kMinImprovement) {
      mape = m;
      best = v;
    }
  }
  set_constant(options, c.name, best);
  return best != current;
}

// The start, then (with restarts) every constant at its lower bound, at the grid point nearest
// its midpoint, and at its upper bound.
std::vector<PlanOptions> search_starts(const PlanOptions& start, bool restarts) {
  std::vector<PlanOptions> out = {start};
  if (!restarts) return out;
  for (const double at : {0.0, 0.5, 1.0}) {
    PlanOptions o = start;
    for (const FittedConstant& c : fitted_constants()) {
      const std::vector<double> grid = constant_grid(c.min, c.max, c.step);
      const auto index =
          static_cast<size_t>(std::lround(at * static_cast<double>(grid.size() - 1)));
      set_constant(o, c.name, grid[index]);
    }
    out.push_back(o);
  }
  return out;
}

}  // namespace

std::vector<double> constant_grid(double min, double max, double step) {
  std::vector<double> out;
  const int64_t n = std::llround((max - min) / step);
  for (int64_t i = 0; i <= n; ++i) {
    out.push_back(std::round((min + static_cast<double>(i) * step) * 1e9) / 1e9);
  }
  return out;
}

CalibrationFit fit_calibration(const std::vector<Measurement>& fit_half,
                               const Catalog& catalog,
                               const PlanOptions& start,
                               const FitOptions& options) {
  for (const Measurement& m : fit_half) {
    if (m.split != MeasurementSplit::kFit) {
      throw InputError(
          fmt::format("{}/{}: the calibration fits on the fitting half only; this "
                      "case is in the {} half",
                      m.source_id,
                      m.name,
                      to_string(m.split)));
    }
  }
  // Memory-only cases have no time error: leaving them out spares planning them at every grid
  // point and changes nothing (validate keeps them out of the MAPE).
  std::vector<Measurement> timed;
  for (const Measurement& m : fit_half) {
    if (m.published.has_throughput()) timed.push_back(m);
  }
  CalibrationFit fit;
  fit.options = start;
  ValidationOptions validation;
  validation.worst = 0;
  const ValidationReport before = validate(timed, catalog, start, validation);
  fit.fit_cases = before.overall.cases;
  if (fit.fit_cases == 0) throw InputError("no case of the fitting half can be planned");
  fit.fit_mape_before = before.overall.mape;
  // A greedy coordinate search stops in the first valley it reaches: it is run from the start
  // and from each constant's lower bound, midpoint and upper bound taken together, and the
  // lowest MAPE wins (the start on ties).
  fit.fit_mape_after = fit.fit_mape_before;
  bool first = true;
  for (const PlanOptions& from : search_starts(start, options.restarts)) {
    PlanOptions candidate = from;
    double mape = first ? fit.fit_mape_before : fit_mape(timed, catalog, candidate);
    int passes = 1;
    for (; passes <= options.max_passes; ++passes) {
      bool changed = false;
      for (const FittedConstant& c : fitted_constants()) {
        changed = fit_one(c, timed, catalog, candidate, mape) || changed;
      }
      if (!changed) break;
    }
    if (first || mape < fit.fit_mape_after - kMinImprovement) {
      fit.options = candidate;
      fit.fit_mape_after = mape;
      fit.passes = std::min(passes, options.max_passes);
    }
    first = false;
  }
  for (const FittedConstant& c : fitted_constants()) {
    fit.values.push_back({c.name,
                          constant_value(fit.options, c.name),
                          c.min,
                          c.max,
                          "fitted on the fit half by `gpudays validate --fit`"});
  }
  return fit;
}

namespace {

std::string mape_line(const char* half,
                      const ValidationReport& before,
                      const ValidationReport& after) {
  return fmt::format("# {} half: {} cases, MAPE {:.1f}% uncalibrated -> {:.1f}% fitted\n",
                     half,
                     after.overall.cases,
                     100.0 * before.overall.mape,
                     100.0 * after.overall.mape);
}

std::string meaning_of(const std::string& name) {
  const auto& c = fitted_constants();
  const auto it = std::find_if(c.begin(), c.end(), [&](const auto& x) { return x.name == name; });
  return it == c.end() ? name : it->meaning;
}

}  // namespace

std::string fitted_calibration_toml(const Catalog& catalog) {
  const auto files = load_measurements(catalog);
  const auto fit_half = select_measurements(files, {MeasurementSplit::kFit, ""});
  const auto check_half = select_measurements(files, {MeasurementSplit::kCheck, ""});
  const CalibrationFit fit = fit_calibration(fit_half, catalog, PlanOptions{});
  auto report = [&](const std::vector<Measurement>& cases, const PlanOptions& options) {
    return validate(cases, catalog, options, {});
  };
  const std::string header =
      "# The planner's fitted efficiency constants (docs/planner.md, \"Calibration\").\n"
      "# Written by `gpudays validate --fit > configs/calibration.toml`; a test recomputes "
      "the fit.\n" +
      mape_line("fitting", report(fit_half, PlanOptions{}), report(fit_half, fit.options)) +
      mape_line("checking", report(check_half, PlanOptions{}), report(check_half, fit.options)) +
      "# (the checking half is reported, never used by the fit)\n";
  CalibrationFile file;
  file.method = fmt::format(
      "coordinate search over each constant's grid within its bounds, minimising the fitting "
      "half's MAPE ({} cases); {} passes",
      fit.fit_cases,
      fit.passes);
  file.values = fit.values;
  return calibration_file_text(file, header, meaning_of);
}

}  // namespace gpudays
