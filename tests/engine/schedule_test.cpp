// Learning-rate schedules and the loss scaler's policy.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/loss_scaler.h"
#include "engine/schedule.h"
#include "test_util.h"

namespace gpudays {
namespace {

TEST(Schedule, PythiaCosineWithWarmupAndFloor) {
  const ScheduleOptions o = schedule_options(test::catalog().model("pythia-1b").recipe);
  EXPECT_EQ(learning_rate(o, 0), 0.0);
  EXPECT_NEAR(learning_rate(o, 715), 3e-4 * 715 / 1430, 1e-15);
  EXPECT_NEAR(learning_rate(o, 1430), 3e-4, 1e-15);
  const int64_t middle = 1430 + (143000 - 1430) / 2;
  EXPECT_NEAR(learning_rate(o, middle), 3e-5 + 0.5 * (3e-4 - 3e-5), 1e-12);
  EXPECT_NEAR(learning_rate(o, 143000), 3e-5, 1e-15);
  EXPECT_NEAR(learning_rate(o, 200000), 3e-5, 1e-15);  // past the end: the floor
  for (int64_t s = 1430; s < 143000; s += 997) EXPECT_GE(learning_rate(o, s), 3e-5);
}

TEST(Schedule, RobertaLinearDecayToZero) {
  const ScheduleOptions o = schedule_options(test::catalog().model("roberta").recipe);
  EXPECT_NEAR(learning_rate(o, 30000), 4e-4, 1e-15);
  EXPECT_NEAR(learning_rate(o, 30000 + 235000), 2e-4, 1e-15);
  EXPECT_NEAR(learning_rate(o, 500000), 0.0, 1e-15);
}

// SmolLM's recipe: 2,000 warm-up steps, the peak until step 480,000, then linear to 0 at 600,000
// (transformers' get_wsd_schedule with decay_type "linear", min_lr_ratio 0).
TEST(Schedule, SmolLmWarmupStableDecay) {
  const ScheduleOptions o = schedule_options(test::catalog().model("smollm-135m").recipe);
  EXPECT_EQ(learning_rate(o, 0), 0.0);
  EXPECT_NEAR(learning_rate(o, 1000), 1.5e-3, 1e-15);
  EXPECT_NEAR(learning_rate(o, 2000), 3e-3, 1e-15);
  EXPECT_NEAR(learning_rate(o, 479999), 3e-3, 1e-15);
  EXPECT_NEAR(learning_rate(o, 480000), 3e-3, 1e-15);
  EXPECT_NEAR(learning_rate(o, 540000), 1.5e-3, 1e-15);
  EXPECT_NEAR(learning_rate(o, 600000), 0.0, 1e-15);
  EXPECT_NEAR(learning_rate(o, 700000), 0.0, 1e-15);
}

// With a floor, wsd warms up from it, as get_wsd_schedule does.
TEST(Schedule, WsdWarmsUpFromItsFloor) {
  const ScheduleOptions o{ScheduleKind::kWsd, 1.0, 0.1, 10, 100, 20};
  EXPECT_NEAR(learning_rate(o, 0), 0.1, 1e-15);
  EXPECT_NEAR(learning_rate(o, 5), 0.55, 1e-15);
  EXPECT_NEAR(learning_rate(o, 50), 1.0, 1e-15);
  EXPECT_NEAR(learning_rate(o, 90), 0.55, 1e-15);
  EXPECT_NEAR(learning_rate(o, 100), 0.1, 1e-15);
}

TEST(LossScaler, SkipsOverflowsBacksOffAndGrows) {
  LossScaler s({/*initial_scale=*/1024,
                /*growth_factor=*/2,
                /*backoff_factor=*/0.5,
                /*growth_interval=*/3,
                /*min_scale=*/1});
  EXPECT_FALSE(s.update(/*found_overflow=*/true));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_TRUE(s.update(false));
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 512);
  EXPECT_TRUE(s.update(false));  // third clean step: grow
  EXPECT_EQ(s.scale(), 1024);
  EXPECT_EQ(s.skipped_steps(), 1);
  for (int i = 0; i < 20; ++i) s.update(true);
  EXPECT_EQ(s.scale(), 1);  // never below the minimum
}

}  // namespace
}  // namespace gpudays
