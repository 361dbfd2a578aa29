// Error bars from validation residuals: the quantile arithmetic, a GPU type's own band or the
// band of every case, the range of a predicted time, and plan rows that carry it.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

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

// A case of its own source unless one is given.
ValidationCase residual(const std::string& gpu,
                        double error,
                        const std::string& family = "gpt_neox",
                        int64_t gpus = 8,
                        std::string source = "") {
  static int sources = 0;
  ValidationCase v;
  v.gpu = gpu;
  v.error = error;
  v.source_id = source.empty() ? "source-" + std::to_string(++sources) : std::move(source);
  const std::string architecture = gpu.rfind("h100", 0) == 0 ? "hopper" : "ampere";
  v.point = {gpu, architecture, family, gpus, 1e9};
  return v;
}

BandPoint point(const std::string& gpu,
                const std::string& architecture,
                const std::string& family = "gpt_neox",
                int64_t gpus = 8,
                double params = 1e9) {
  return {gpu, architecture, family, gpus, params};
}

// A GPU type with cases from kMinBandSources sources gets its own band; one with fewer gets its
// generation's, and without that every case's.
TEST(ErrorBand, OwnBandFromThreeCasesElseGenerationElseAll) {
  ValidationReport report;
  for (double e : {-0.2, 0.0, 0.1}) report.cases.push_back(residual("a100-80gb-sxm", e));
  for (double e : {0.5, 0.7}) report.cases.push_back(residual("h100-sxm", e));
  ValidationCase skipped = residual("h100-sxm", 9.0);
  skipped.skipped = true;
  report.cases.push_back(skipped);
  const ErrorBands bands = error_bands(report);
  const ErrorBand a100 = bands.for_point(point("a100-80gb-sxm", "ampere"));
  EXPECT_EQ(a100.cases, 3);
  EXPECT_DOUBLE_EQ(a100.low_error, -0.16);
  EXPECT_DOUBLE_EQ(a100.high_error, 0.08);
  EXPECT_EQ(a100.basis, "3 published a100-80gb-sxm cases (3 sources)");
  EXPECT_TRUE(a100.far.empty());
  const ErrorBand a6000 = bands.for_point(point("rtx-a6000", "ampere"));
  EXPECT_EQ(a6000.basis, "3 published ampere GPU cases (3 sources)");
  EXPECT_DOUBLE_EQ(a6000.low_error, -0.16);
  const ErrorBand h100 = bands.for_point(point("h100-sxm", "hopper"));
  EXPECT_EQ(h100.cases, 5);
  EXPECT_EQ(h100.basis, "5 published cases, all GPUs");
  // Two hopper cases: far from the published ones by the generations' spread, the largest
  // well-published generation's |mean error| (ampere: 0.1/3) or the all-case band's half-width.
  ASSERT_EQ(h100.far.size(), 1u);
  EXPECT_EQ(h100.far[0].rfind("2 published hopper GPU cases from only 2 sources", 0), 0u)
      << h100.far[0];
  const double half_width = 0.5 * (bands.all().high_error - bands.all().low_error);
  EXPECT_DOUBLE_EQ(h100.high_error, bands.all().high_error + half_width);
  EXPECT_DOUBLE_EQ(h100.low_error, bands.all().low_error - half_width);
  // A predicted time t: the published one was t x (1 + e).
  const TimeRange r = a100.range(10.0);
  EXPECT_DOUBLE_EQ(r.low, 8.4);
  EXPECT_DOUBLE_EQ(r.high, 10.8);
}

// Cases of one publication move together: twelve of them make no band of their own.
TEST(ErrorBand, SourcesNotCasesMakeABand) {
  ValidationReport report;
  for (int i = 0; i < 12; ++i)
    report.cases.push_back(residual("h100-sxm", 0.01 * i, "llama", 8, "one-paper"));
  for (double e : {-0.2, 0.0, 0.1}) report.cases.push_back(residual("a100-80gb-sxm", e));
  const ErrorBands bands = error_bands(report);
  const ErrorBand h100 = bands.for_point(point("h100-sxm", "hopper", "llama"));
  EXPECT_EQ(h100.basis, "15 published cases, all GPUs");
  ASSERT_EQ(h100.far.size(), 2u);
  EXPECT_EQ(h100.far[0].rfind("12 published llama model cases from only 1 source", 0), 0u)
      << h100.far[0];
  EXPECT_EQ(h100.far[1].rfind("12 published hopper GPU cases from only 1 source", 0), 0u)
      << h100.far[1];
}

// Every residual of a GPU type on one side (the planner biased there): the band still contains
// the estimate, the percentile on the wrong side replaced by 0.
TEST(ErrorBand, OneSidedResidualsWidenTheBandToContainTheEstimate) {
  ValidationReport report;
  for (double e : {-0.3, -0.2, -0.1}) report.cases.push_back(residual("rtx-3090", e));
  for (double e : {0.1, 0.2, 0.3}) report.cases.push_back(residual("h100-sxm", e));
  const ErrorBands bands = error_bands(report);
  const ErrorBand low = bands.for_point(point("rtx-3090", "ampere"));
  EXPECT_DOUBLE_EQ(low.low_error, -0.28);
  EXPECT_DOUBLE_EQ(low.high_error, 0.0);
  EXPECT_TRUE(low.widened);
  EXPECT_DOUBLE_EQ(low.range(10.0).high, 10.0);
  const ErrorBand high = bands.for_point(point("h100-sxm", "hopper"));
  EXPECT_DOUBLE_EQ(high.low_error, 0.0);
  EXPECT_DOUBLE_EQ(high.high_error, 0.28);
  EXPECT_TRUE(high.widened);
  EXPECT_DOUBLE_EQ(high.range(10.0).low, 10.0);
  EXPECT_FALSE(bands.all().widened);
}

// A family nobody published is as far as the most biased published family (vit, -0.2 on average
// here), a GPU count or model size beyond the cases' by the all-case half-width; the widths add in
// quadrature (independent ways to be far), and the fast end never falls below kBandLowestError.
TEST(ErrorBand, FarFromThePublishedCasesIsWiderAndSaysWhy) {
  ValidationReport report;
  for (double e : {-0.05, 0.0, 0.05}) report.cases.push_back(residual("a100-80gb-sxm", e));
  for (double e : {-0.3, -0.2, -0.1})
    report.cases.push_back(residual("a100-80gb-sxm", e, "vit", 1));
  const ErrorBands bands = error_bands(report);
  const ErrorBand near = bands.for_point(point("a100-80gb-sxm", "ampere", "vit", 8));
  EXPECT_TRUE(near.far.empty());
  const ErrorBand mamba = bands.for_point(point("a100-80gb-sxm", "ampere", "mamba", 8));
  ASSERT_EQ(mamba.far.size(), 1u);
  EXPECT_EQ(mamba.far[0], "no published mamba model case (+/-20%)");
  EXPECT_NEAR(mamba.high_error, near.high_error + 0.2, 1e-12);
  EXPECT_NEAR(mamba.low_error, near.low_error - 0.2, 1e-12);
  const double half_width = 0.5 * (bands.all().high_error - bands.all().low_error);
  const ErrorBand big = bands.for_point(point("a100-80gb-sxm", "ampere", "gpt_neox", 64, 5e9));
  ASSERT_EQ(big.far.size(), 2u);
  EXPECT_EQ(big.far[0].rfind("64 GPUs, published cases use at most 8", 0), 0u) << big.far[0];
  EXPECT_EQ(big.far[1].rfind("5B parameters, published cases span 1B-1B", 0), 0u) << big.far[1];
  EXPECT_NEAR(big.high_error, near.high_error + std::sqrt(2.0) * half_width, 1e-12);
  EXPECT_NEAR(big.far_width, std::sqrt(2.0) * half_width, 1e-12);
  EXPECT_EQ(big.far_summary(),
            big.far[0] + "; " + big.far[1] +
                fmt::format("; together +/-{:.0f}% (in quadrature)", 100.0 * big.far_width));
  EXPECT_EQ(mamba.far_summary(), mamba.far[0]);
  const ErrorBand everything = bands.for_point(point("b200", "blackwell", "mamba", 4096, 1e12));
  EXPECT_EQ(everything.far.size(), 4u);
  const double all_ways = std::sqrt(0.2 * 0.2 + 3 * half_width * half_width);
  EXPECT_NEAR(everything.high_error, bands.all().high_error + all_ways, 1e-12);
  EXPECT_NEAR(everything.low_error, bands.all().low_error - all_ways, 1e-12);
  // Residuals biased by 80% on one GPU type: a family nobody published may be as far off, and the
  // fast end stops at kBandLowestError.
  ValidationReport biased;
  for (double e : {-0.9, -0.8, -0.7}) biased.cases.push_back(residual("rtx-3090", e, "vit"));
  const ErrorBand unseen = error_bands(biased).for_point(point("rtx-3090", "ampere", "mamba"));
  EXPECT_DOUBLE_EQ(unseen.low_error, kBandLowestError);
}

// Whose model code ran is a way to be far too: code with cases from fewer than kMinBandSources
// sources widens the range and says so; a point that names no code is never far by it.
TEST(ErrorBand, ModelCodeWithFewSourcesIsFar) {
  ValidationReport report;
  for (double e : {-0.1, 0.0, 0.1}) {
    ValidationCase v = residual("a100-80gb-sxm", e);
    v.point.stack = "llama_reference";
    report.cases.push_back(v);
  }
  ValidationCase hf = residual("a100-80gb-sxm", 0.3);
  hf.point.stack = "huggingface";
  report.cases.push_back(hf);
  const ErrorBands bands = error_bands(report);
  BandPoint p = point("a100-80gb-sxm", "ampere");
  EXPECT_TRUE(bands.for_point(p).far.empty());
  p.stack = "llama_reference";
  const ErrorBand near = bands.for_point(p);
  EXPECT_TRUE(near.far.empty());
  p.stack = "huggingface";
  const ErrorBand eager = bands.for_point(p);
  ASSERT_EQ(eager.far.size(), 1u);
  EXPECT_EQ(eager.far[0].rfind("1 published huggingface model code case from only 1 source", 0), 0u)
      << eager.far[0];
  // As far as the most biased well-sourced code (llama_reference, unbiased here): the all-case
  // half-width, the floor.
  const double half_width = 0.5 * (bands.all().high_error - bands.all().low_error);
  EXPECT_NEAR(eager.high_error, near.high_error + half_width, 1e-12);
  EXPECT_NEAR(eager.low_error, near.low_error - half_width, 1e-12);
  p.stack = "llm_c";
  const ErrorBand unseen = bands.for_point(p);
  ASSERT_EQ(unseen.far.size(), 1u);
  EXPECT_EQ(unseen.far[0].rfind("no published llm_c model code case", 0), 0u) << unseen.far[0];
}

// Coverage is out of sample: each checking-half case against the band of the fitting half alone.
TEST(ErrorBand, CoverageChecksTheCheckingHalfAgainstTheFittingHalfsBand) {
  std::vector<ValidationCase> cases;
  for (double e : {-0.1, -0.05, 0.0, 0.05, 0.1})
    cases.push_back(residual("a100-80gb-sxm", e));  // fit: band -0.08..+0.08
  for (double e : {0.0, 0.07, 0.09, -0.5}) {
    ValidationCase v = residual("a100-80gb-sxm", e);
    v.split = MeasurementSplit::kCheck;
    cases.push_back(v);
  }
  ValidationCase untrusted = residual("a100-80gb-sxm", 0.0);
  untrusted.split = MeasurementSplit::kCheck;
  untrusted.trusted = false;
  cases.push_back(untrusted);
  const std::optional<CoverageReport> c = range_coverage(cases);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->overall.cases, 4);
  EXPECT_EQ(c->overall.inside, 2);
  EXPECT_DOUBLE_EQ(c->overall.share(), 0.5);
  ASSERT_EQ(c->by_architecture.size(), 1u);
  EXPECT_EQ(c->by_architecture[0].group, "ampere");
  ASSERT_EQ(c->by_family.size(), 1u);
  EXPECT_EQ(c->by_family[0].group, "gpt_neox");
  EXPECT_EQ(c->outside, (std::vector<size_t>{7, 8}));
  cases.resize(5);  // no checking half: no coverage
  EXPECT_FALSE(range_coverage(cases));
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
  EXPECT_EQ(*b.error_band,
            options.error_bands->for_point(
                {"a100-80gb-sxm", "ampere", "gpt_neox", 4, static_cast<double>(405334016)}));
  EXPECT_DOUBLE_EQ(b.training_days_range->low, b.training_days * (1 + b.error_band->low_error));
  EXPECT_DOUBLE_EQ(b.step_time_range_s->high, b.step_time_s * (1 + b.error_band->high_error));
  EXPECT_LE(b.training_days_range->low, b.training_days_range->high);
  EXPECT_FALSE(plan(model, cluster, PlanOptions{}).best->training_days_range);
}

}  // namespace
}  // namespace gpudays
