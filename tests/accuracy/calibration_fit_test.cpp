// The calibration of the planner's efficiency constants: configs/calibration.toml is exactly what
// the fit on the fitting half gives (recomputed here), the fit never sees the checking half, every
// value stays within its physical bounds, and the calibrated planner stays under the matmul
// ceiling; calibration files with bad input get a one-line error naming the file and the key.
#include <gtest/gtest.h>

#include <cmath>

#include <string>

#include "accuracy/calibration_fit.h"
#include "accuracy/validate.h"
#include "catalog/calibration_file.h"
#include "common/error.h"
#include "plan/fitted_constants.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

std::vector<Measurement> half(MeasurementSplit split) {
  return select_measurements(load_measurements(catalog()), {split, ""});
}

// Write -> read -> equal: the checked-in file, and values and strings the fit never writes.
TEST(CalibrationFileFormat, WriterAndReaderRoundTrip) {
  CalibrationFile odd;
  odd.method = "a \"quoted\" method with a backslash \\ and a 'quote'";
  odd.values = {{"matmul_fraction_of_ceiling.sm_80", 0.1234567891234, 0.1, 1.0, "source \"x\""},
                {"memory_efficiency", 1.0 / 3.0, 1e-3, 2.5e6, ""}};
  for (CalibrationFile file : {load_calibration(catalog()), odd}) {
    const std::string text =
        calibration_file_text(file, "# header\n", [](const std::string& n) { return "of " + n; });
    CalibrationFile back = load_calibration_file(test::write_temp_file("round.toml", text));
    back.path = file.path;
    EXPECT_EQ(back, file) << text;
  }
}

TEST(CalibrationFit, CheckedInValuesAreTheFitOfTheFittingHalf) {
  const CalibrationFile file = load_calibration(catalog());
  ASSERT_FALSE(file.values.empty()) << "configs/calibration.toml is missing";
  const CalibrationFit fit = fit_calibration(half(MeasurementSplit::kFit), catalog(), {});
  ASSERT_EQ(fit.values.size(), file.values.size());
  for (size_t i = 0; i < fit.values.size(); ++i) {
    EXPECT_EQ(file.values[i].name, fit.values[i].name);
    EXPECT_NEAR(file.values[i].value, fit.values[i].value, 1e-9) << fit.values[i].name;
    EXPECT_EQ(file.values[i].min, fit.values[i].min);
    EXPECT_EQ(file.values[i].max, fit.values[i].max);
  }
  EXPECT_LE(fit.fit_mape_after, fit.fit_mape_before);
}

// The restarts (every constant at its lower bound, midpoint, upper bound) keep the start's
// valley when it is the deepest and never end in a shallower one.
TEST(CalibrationFit, RestartsNeverEndInAShallowerValley) {
  FitOptions from_start_only;
  from_start_only.restarts = false;
  const auto fit_half = half(MeasurementSplit::kFit);
  const CalibrationFit one = fit_calibration(fit_half, catalog(), {}, from_start_only);
  const CalibrationFit best = fit_calibration(fit_half, catalog(), {});
  EXPECT_LE(best.fit_mape_after, one.fit_mape_after);
  EXPECT_LE(one.fit_mape_after, one.fit_mape_before);
  EXPECT_DOUBLE_EQ(best.fit_mape_before, one.fit_mape_before);
}

TEST(CalibrationFit, RefusesTheCheckingHalf) {
  EXPECT_THROW(fit_calibration(half(MeasurementSplit::kCheck), catalog(), {}), InputError);
}

// Calibrated and not, every planned case (untrusted ones too) executes at most the matmul
// ceiling's FLOPs, and its step time and throughput are finite and positive.
TEST(CalibrationFit, NoCaseOverTheMatmulCeiling) {
  const PlanOptions calibrated = calibrated_plan_options(load_calibration(catalog()));
  ValidationOptions all;
  all.include_untrusted = true;
  int planned = 0;
  for (const PlanOptions& options : {calibrated, PlanOptions{}}) {
    const ValidationReport report =
        validate(select_measurements(load_measurements(catalog()), {}), catalog(), options, all);
    for (const ValidationCase& v : report.cases) {
      if (v.skipped) continue;
      ++planned;
      const double ceiling = catalog().gpu(v.gpu).matmul_ceiling_fraction;
      EXPECT_LE(v.row->executed_utilisation, ceiling + 1e-12) << v.name;
      EXPECT_TRUE(std::isfinite(v.row->step_time_s) && v.row->step_time_s > 0.0) << v.name;
      EXPECT_TRUE(std::isfinite(v.predicted) && v.predicted > 0.0) << v.name;
      EXPECT_GT(v.row->training_days, 0.0) << v.name;
    }
  }
  EXPECT_GE(planned, 2 * 54);
}

TEST(FittedConstants, GridAndBounds) {
  const std::vector<double> grid = constant_grid(0.5, 1.0, 0.025);
  ASSERT_EQ(grid.size(), 21u);
  EXPECT_EQ(grid.front(), 0.5);
  EXPECT_EQ(grid.back(), 1.0);
  EXPECT_NEAR(grid[7], 0.675, 1e-12);
  PlanOptions options;
  for (const FittedConstant& c : fitted_constants()) {
    EXPECT_LT(c.min, c.max) << c.name;
    const double start = constant_value(options, c.name);
    EXPECT_TRUE(start >= c.min && start <= c.max) << c.name << " starts outside its bounds";
  }
  EXPECT_EQ(constant_value(options, "matmul_fraction_of_ceiling.sm_90"), 1.0);
  set_constant(options, "eager_dispatch_us", 12.0);
  EXPECT_NEAR(options.device.eager_dispatch_s, 12e-6, 1e-18);
  EXPECT_THROW(set_constant(options, "memory_efficiency", 0.95), InputError);
  EXPECT_THROW(set_constant(options, "warp_speed", 1.0), InputError);
}

std::string load_error(const std::string& text) {
  try {
    load_calibration_file(test::write_temp_file("calibration.toml", text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

constexpr const char* kValid = R"([fit]
method = "by hand"

[[constants]]
name = "memory_efficiency"
value = 0.8
min = 0.3
max = 0.9
source = "a test"
)";

std::string edit(const std::string& from, const std::string& to) {
  std::string s = kValid;
  return s.replace(s.find(from), from.size(), to);
}

TEST(CalibrationFile, LoadsAndApplies) {
  const CalibrationFile file =
      load_calibration_file(test::write_temp_file("calibration.toml", kValid));
  ASSERT_EQ(file.values.size(), 1u);
  EXPECT_EQ(file.method, "by hand");
  EXPECT_EQ(calibrated_plan_options(file).device.memory_efficiency, 0.8);
}

TEST(CalibrationFile, BadInputNamesFileConstantAndKey) {
  EXPECT_NE(load_error(edit("value = 0.8", "value = 0.95")).find("constant 'memory_efficiency'"),
            std::string::npos);
  EXPECT_NE(load_error(edit("source", "colour = 1\nsource")).find("colour: unknown key"),
            std::string::npos);
  EXPECT_NE(load_error(edit("value = 0.8", "value = nan")).find("value"), std::string::npos);
  EXPECT_NE(load_error(edit("[fit]", "[fitt]")).find("fitt: unknown key"), std::string::npos);
  CalibrationFile unknown = load_calibration_file(
      test::write_temp_file("calibration.toml", edit("memory_efficiency", "warp_speed")));
  try {
    calibrated_plan_options(unknown);
    FAIL() << "an unknown constant was applied";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.toml: unknown calibration constant"),
              std::string::npos)
        << e.what();
  }
  CalibrationFile other_bounds = load_calibration_file(
      test::write_temp_file("calibration.toml", edit("min = 0.3", "min = 0.4")));
  EXPECT_THROW(calibrated_plan_options(other_bounds), InputError);
}

}  // namespace
}  // namespace gpudays
