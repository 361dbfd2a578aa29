// The paper's statistics against hand-computed values: t quantiles, the mean and its 95%
// interval, the median, the memory-saving speed-ups and gain, whole-day rounding.
#include <gtest/gtest.h>

#include <cmath>

#include "report/paper_statistics.h"

namespace gpudays {
namespace {

TEST(PaperStatistics, StudentTQuantilesMatchTheTable) {
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.7062);
  EXPECT_DOUBLE_EQ(student_t_975(2), 4.3027);
  EXPECT_DOUBLE_EQ(student_t_975(30), 2.0423);
  // Beyond the table, the expansion: exact t(0.975) for 40, 60 and 120 degrees of freedom.
  EXPECT_NEAR(student_t_975(40), 2.0211, 1e-4);
  EXPECT_NEAR(student_t_975(60), 2.0003, 1e-4);
  EXPECT_NEAR(student_t_975(120), 1.9799, 1e-4);
  EXPECT_NEAR(student_t_975(1000000), 1.95996, 1e-4);
  EXPECT_THROW(student_t_975(0), std::invalid_argument);
}

TEST(PaperStatistics, MeanAndIntervalByHand) {
  // {1, 2, 3}: mean 2, s = 1, t(2) = 4.3027, half-width 4.3027 / sqrt(3) = 2.48416.
  const auto a = mean_ci95({1.0, 2.0, 3.0});
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ(a->mean, 2.0);
  EXPECT_NEAR(a->low, -0.48416, 1e-5);
  EXPECT_NEAR(a->high, 4.48416, 1e-5);
  EXPECT_EQ(a->count, 3u);
  // {1.2, 1.5, 1.8, 2.1}: mean 1.65, s = sqrt(0.15) = 0.387298, t(3) = 3.1824, half 0.61627.
  const auto b = mean_ci95({1.2, 1.5, 1.8, 2.1});
  EXPECT_NEAR(b->mean, 1.65, 1e-12);
  EXPECT_NEAR(b->low, 1.03373, 1e-5);
  EXPECT_NEAR(b->high, 2.26627, 1e-5);
  EXPECT_EQ(mean_ci95({7.0}), (MeanInterval{7.0, 7.0, 7.0, 1}));
  EXPECT_FALSE(mean_ci95({}));
}

TEST(PaperStatistics, MedianAsPolarsComputesIt) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_THROW(median({}), std::invalid_argument);
}

TEST(PaperStatistics, MemorySavingSpeedupsAreRelativeToTheWorst) {
  // Worst 40 days: optimal 40/10 = 4, median 40/25 = 1.6, worst 1, free lunch 40/8 = 5.
  const auto s = memory_saving_speedups({10.0, 20.0, 40.0, 30.0}, 8.0);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (MemorySavingSpeedups{4.0, 1.6, 1.0, 5.0}));
  EXPECT_FALSE(memory_saving_speedups({10.0}, std::nullopt)->free_lunch);
  EXPECT_FALSE(memory_saving_speedups({}, 8.0));
}

TEST(PaperStatistics, GainOverFreeLunchAndWholeDays) {
  EXPECT_NEAR(memory_saving_gain(10.0, 2.9), 0.71, 1e-12);   // the paper's "up to 71%"
  EXPECT_NEAR(memory_saving_gain(10.0, 12.0), -0.2, 1e-12);  // memory-saving is slower
  EXPECT_EQ(whole_days(0.4), 0.0);
  EXPECT_EQ(whole_days(0.5), 1.0);
  EXPECT_EQ(whole_days(2.5), 3.0);
  EXPECT_EQ(whole_days(12.49), 12.0);
  EXPECT_EQ(whole_days(143.7), 144.0);
}

}  // namespace
}  // namespace gpudays
