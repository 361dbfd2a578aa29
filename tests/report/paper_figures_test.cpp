// The paper's figures on a hand-made set of report cells: which cells each bar averages (more
// than one GPU for the memory-saving comparison; naive, analytic and optimal all present for
// relative speed), the free-lunch-only baseline of the heat-map, and its percent labels.
#include <gtest/gtest.h>

#include <cmath>

#include "report/paper_figures.h"

namespace gpudays {
namespace {

// A cell of a hand-made report: naive and optimal days (optimal at `mfu`), and method sets.
TierDetail cell(int64_t gpus, std::optional<double> naive, double optimal, double mfu) {
  TierDetail d;
  d.model = "m";
  d.gpu = "g";
  d.layout = {1, gpus};
  d.tiers[0].fits = naive.has_value();
  d.tiers[0].training_days = naive.value_or(0.0);
  d.tiers[2].fits = true;
  d.tiers[2].training_days = optimal;
  d.tiers[2].mfu = mfu;
  return d;
}

MethodSetDays set(bool free_lunch, bool ckpt, Sharding s, std::optional<double> days) {
  return {MethodSet{free_lunch, ckpt, s, /*offloading=*/false}, days};
}

ReportData hand_made_cells() {
  ReportData data;
  // 2 GPUs: free lunch only 8 days; memory-saving 10, 20, 40, 30 (one does not fit); a
  // free-lunch-off set is not the paper's grid and is ignored.
  TierDetail a = cell(2, 10.0, 5.0, 0.5);
  a.methods.method_sets = {set(true, false, Sharding::kNone, 8.0),
                           set(true, true, Sharding::kNone, 10.0),
                           set(true, false, Sharding::kZero1, 20.0),
                           set(true, false, Sharding::kZero2, 40.0),
                           set(true, false, Sharding::kZero3, 30.0),
                           set(true, true, Sharding::kZero3, std::nullopt),
                           set(false, true, Sharding::kNone, 1.0)};
  // 4 GPUs: free lunch only does not fit; memory-saving 6 and 12.
  TierDetail b = cell(4, 12.0, 4.0, 0.6);
  b.methods.method_sets = {set(true, false, Sharding::kNone, std::nullopt),
                           set(true, true, Sharding::kNone, 6.0),
                           set(true, false, Sharding::kZero2, 12.0)};
  // 1 GPU (left out of the memory-saving bars) where naive does not fit (out of the speeds).
  TierDetail c = cell(1, std::nullopt, 50.0, 0.4);
  c.methods.method_sets = {set(true, false, Sharding::kNone, 3.0),
                           set(true, true, Sharding::kNone, 1.0)};
  data.details = {a, b, c};
  return data;
}

TEST(PaperFigures, MemorySavingBarsAverageTheCellsWithMoreThanOneGpu) {
  const MemorySavingBars bars = memory_saving_bars(hand_made_cells());
  // Optimal: {40/10, 12/6} = {4, 2}: mean 3, half-width t(1) x sqrt(2) / sqrt(2) = 12.7062.
  ASSERT_TRUE(bars.optimal);
  EXPECT_DOUBLE_EQ(bars.optimal->mean, 3.0);
  EXPECT_NEAR(bars.optimal->low, 3.0 - 12.7062, 1e-9);
  EXPECT_NEAR(bars.optimal->high, 3.0 + 12.7062, 1e-9);
  EXPECT_EQ(bars.optimal->count, 2u);
  // Median: {40/25, 12/9}; worst: 1; free lunch: only the first cell, 40/8.
  EXPECT_NEAR(bars.median->mean, (1.6 + 12.0 / 9.0) / 2.0, 1e-12);
  EXPECT_EQ(bars.worst, (MeanInterval{1.0, 1.0, 1.0, 2}));
  EXPECT_EQ(bars.free_lunch, (MeanInterval{5.0, 5.0, 5.0, 1}));
}

TEST(PaperFigures, RelativeSpeedIsNaiveDaysOverEachAndNaiveIsOne) {
  const RelativeSpeedBars bars = relative_speed_bars(hand_made_cells());
  // Analytic days = optimal days x MFU: 2.5 and 2.4; naive / analytic = {4, 5}; naive /
  // optimal = {2, 3}; the third cell has no naive.
  ASSERT_TRUE(bars.analytic);
  EXPECT_DOUBLE_EQ(bars.analytic->mean, 4.5);
  const double half = 12.7062 * std::sqrt(0.5) / std::sqrt(2.0);  // s = sqrt(0.5), n = 2
  EXPECT_NEAR(bars.analytic->high, 4.5 + half, 1e-9);
  EXPECT_NEAR(bars.optimal->mean, 2.5, 1e-12);
  EXPECT_NEAR(bars.optimal->low, 2.5 - half, 1e-9);
  EXPECT_EQ(bars.naive, (MeanInterval{1.0, 1.0, 1.0, 2}));
}

TEST(PaperFigures, GainLabelsPrintAsThePapersHeatMap) {
  EXPECT_EQ(percent_text(0.71), "71%");
  EXPECT_EQ(percent_text(-0.2), "-20%");
  EXPECT_EQ(percent_text(-0.001), "0%");
}

TEST(PaperFigures, GainIsTheFastestMemorySavingOverFreeLunchOnly) {
  const ReportData data = hand_made_cells();
  EXPECT_NEAR(*free_lunch_gain(data.details[0].methods), (8.0 - 10.0) / 8.0, 1e-12);
  EXPECT_FALSE(free_lunch_gain(data.details[1].methods));  // free lunch does not fit
  EXPECT_NEAR(*free_lunch_gain(data.details[2].methods), 2.0 / 3.0, 1e-12);
}

}  // namespace
}  // namespace gpudays
