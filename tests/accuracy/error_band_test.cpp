// Error bars from validation residuals: the quantile arithmetic, a GPU type's own band or the
// band of every case, the range of a predicted time, and plan rows that carry it.
#include <gtest/gtest.h>

#include <cmath>

#include "accuracy/error_bands.h"
#include "accuracy/validate.h"
#include "catalog/calibration_file.h"
#include "plan/fitted_constants.h"
#include "plan/planner.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

TEST(ErrorBand, QuantileInterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7.0);
}

ValidationCase residual(const std::string& gpu, double error) {
  ValidationCase v;
  v.gpu = gpu;
  v.error = error;
  return v;
}

// A GPU type with kMinBandCases cases gets its own band; one with fewer gets every case's.
TEST(ErrorBand, OwnBandFromThreeCasesElseAll) {
  ValidationReport report;
  for (double e : {-0.2, 0.0, 0.1}) report.cases.push_back(residual("a100-80gb-sxm", e));
  for (double e : {0.5, 0.7}) report.cases.push_back(residual("h100-sxm", e));
  ValidationCase skipped = residual("h100-sxm", 9.0);
  skipped.skipped = true;
  report.cases.push_back(skipped);
  const ErrorBands bands = error_bands(report);
  const ErrorBand& a100 = bands.for_gpu("a100-80gb-sxm");
  EXPECT_EQ(a100.cases, 3);
  EXPECT_DOUBLE_EQ(a100.low_error, -0.16);
  EXPECT_DOUBLE_EQ(a100.high_error, 0.08);
  EXPECT_EQ(a100.basis, "3 published a100-80gb-sxm cases");
  const ErrorBand& h100 = bands.for_gpu("h100-sxm");
  EXPECT_EQ(h100.cases, 5);
  EXPECT_EQ(h100.basis, "5 published cases, all GPUs");
  EXPECT_EQ(&bands.for_gpu("rtx-a6000"), &bands.all());
  // A predicted time t: the published one was t x (1 + e).
  const TimeRange r = a100.range(10.0);
  EXPECT_DOUBLE_EQ(r.low, 8.4);
  EXPECT_DOUBLE_EQ(r.high, 10.8);
}

// Every residual of a GPU type on one side (the planner biased there): the band still contains
// the estimate, the percentile on the wrong side replaced by 0.
TEST(ErrorBand, OneSidedResidualsWidenTheBandToContainTheEstimate) {
  ValidationReport report;
  for (double e : {-0.3, -0.2, -0.1}) report.cases.push_back(residual("rtx-3090", e));
  for (double e : {0.1, 0.2, 0.3}) report.cases.push_back(residual("h100-sxm", e));
  const ErrorBands bands = error_bands(report);
  const ErrorBand& low = bands.for_gpu("rtx-3090");
  EXPECT_DOUBLE_EQ(low.low_error, -0.28);
  EXPECT_DOUBLE_EQ(low.high_error, 0.0);
  EXPECT_TRUE(low.widened);
  EXPECT_DOUBLE_EQ(low.range(10.0).high, 10.0);
  const ErrorBand& high = bands.for_gpu("h100-sxm");
  EXPECT_DOUBLE_EQ(high.low_error, 0.0);
  EXPECT_DOUBLE_EQ(high.high_error, 0.28);
  EXPECT_TRUE(high.widened);
  EXPECT_DOUBLE_EQ(high.range(10.0).low, 10.0);
  EXPECT_FALSE(bands.all().widened);
}

// On every GPU type of the catalog, with the checked-in calibration and its validation residuals,
// the best row's range contains its estimate: low <= estimate <= high, all finite and positive.
TEST(ErrorBand, EveryGpuTypesRangeContainsTheEstimate) {
  PlanOptions options = calibrated_plan_options(load_calibration(catalog()));
  options.error_bands = validation_error_bands(catalog(), options);
  ASSERT_TRUE(options.error_bands);
  const ModelSpec& model = catalog().model("pythia-14m");
  int planned = 0;
  for (const GpuSpec& gpu : catalog().gpus()) {
    if (gpu.kind != DeviceKind::kGpu) continue;
    ModelSpec m = model;
    if (!gpu.supports_bf16()) m.recipe.precision = Precision::kFp16;
    const PlanResult result = plan(m, Cluster{{1, 1}, &gpu}, options);
    ASSERT_TRUE(result.best) << gpu.name;
    const PlanRow& b = *result.best;
    ASSERT_TRUE(b.training_days_range && b.step_time_range_s) << gpu.name;
    EXPECT_GT(b.training_days_range->low, 0.0) << gpu.name;
    EXPECT_LE(b.training_days_range->low, b.training_days) << gpu.name;
    EXPECT_GE(b.training_days_range->high, b.training_days) << gpu.name;
    EXPECT_LE(b.step_time_range_s->low, b.step_time_s) << gpu.name;
    EXPECT_GE(b.step_time_range_s->high, b.step_time_s) << gpu.name;
    EXPECT_TRUE(std::isfinite(b.training_days_range->high)) << gpu.name;
    ++planned;
  }
  EXPECT_GE(planned, 10);
}

TEST(ErrorBand, PlanRowsCarryTheirGpuTypesRange) {
  PlanOptions options;
  options.error_bands = validation_error_bands(catalog(), options);
  ASSERT_TRUE(options.error_bands);
  const ModelSpec& model = catalog().model("pythia-410m");
  const Cluster cluster{{1, 4}, &catalog().gpu("a100-80gb-sxm")};
  const PlanResult result = plan(model, cluster, options);
  ASSERT_TRUE(result.best);
  const PlanRow& b = *result.best;
  ASSERT_TRUE(b.error_band && b.training_days_range && b.step_time_range_s);
  EXPECT_EQ(*b.error_band, options.error_bands->for_gpu("a100-80gb-sxm"));
  EXPECT_DOUBLE_EQ(b.training_days_range->low, b.training_days * (1 + b.error_band->low_error));
  EXPECT_DOUBLE_EQ(b.step_time_range_s->high, b.step_time_s * (1 + b.error_band->high_error));
  EXPECT_LE(b.training_days_range->low, b.training_days_range->high);
  EXPECT_FALSE(plan(model, cluster, PlanOptions{}).best->training_days_range);
}

}  // namespace
}  // namespace gpudays
