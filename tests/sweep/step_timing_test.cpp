// Step-time arithmetic: medians and spreads, the composition of a step from its parts, the 5%
// check, and the progress line's estimate of the time left.
#include <gtest/gtest.h>

#include "common/error.h"
#include "sweep/progress.h"
#include "sweep/step_timing.h"

namespace gpudays {
namespace {

TEST(StepTiming, SpreadIsMedianMinMax) {
  const Spread odd = spread_of({3.0, 1.0, 2.0});
  EXPECT_DOUBLE_EQ(odd.median_s, 2.0);
  EXPECT_DOUBLE_EQ(odd.min_s, 1.0);
  EXPECT_DOUBLE_EQ(odd.max_s, 3.0);
  EXPECT_DOUBLE_EQ(spread_of({4.0, 1.0, 2.0, 3.0}).median_s, 2.5);
  EXPECT_THROW(spread_of({}), std::invalid_argument);
}

TEST(StepTiming, PartsComposeIntoAStep) {
  PartTimes parts;
  parts.micro_s = {0.10, 0.12, 0.11};       // median 0.11
  parts.last_micro_s = {0.20, 0.25, 0.21};  // median 0.21
  parts.optimizer_s = {0.05, 0.04, 0.06};   // median 0.05
  const ComposedStep c = compose_step(parts, /*grad_acc_steps=*/8);
  EXPECT_DOUBLE_EQ(c.step.median_s, 7 * 0.11 + 0.21 + 0.05);
  EXPECT_DOUBLE_EQ(c.step.min_s, 7 * 0.10 + 0.20 + 0.04);
  EXPECT_DOUBLE_EQ(c.step.max_s, 7 * 0.12 + 0.25 + 0.06);
  EXPECT_DOUBLE_EQ(c.micro_s, 0.11);
  EXPECT_DOUBLE_EQ(c.last_micro_s, 0.21);
  EXPECT_DOUBLE_EQ(c.optimizer_s, 0.05);
}

TEST(StepTiming, OneMicroStepHasNoNonLastPart) {
  PartTimes parts;
  parts.last_micro_s = {0.3, 0.3, 0.3};
  parts.optimizer_s = {0.1, 0.1, 0.1};
  EXPECT_DOUBLE_EQ(compose_step(parts, 1).step.median_s, 0.4);
  EXPECT_THROW(compose_step(parts, 2), std::invalid_argument);  // no non-last micro-step timed
}

TEST(StepTiming, CompositionAgreesWithinFivePercent) {
  EXPECT_TRUE(composition_agrees(1.049, 1.0));
  EXPECT_TRUE(composition_agrees(0.951, 1.0));
  EXPECT_FALSE(composition_agrees(1.06, 1.0));
  EXPECT_FALSE(composition_agrees(0.94, 1.0));
  EXPECT_NEAR(composition_error(1.1, 1.0), 0.1, 1e-12);
}

TEST(StepTiming, TimingNames) {
  EXPECT_EQ(parse_step_timing("parts"), StepTiming::kParts);
  EXPECT_EQ(to_string(StepTiming::kWhole), "whole");
  EXPECT_THROW(parse_step_timing("halves"), InputError);
}

TEST(Progress, EtaIsTheMedianTrialTimesTheTrialsLeft) {
  EXPECT_FALSE(eta_s({}, 5));
  EXPECT_DOUBLE_EQ(*eta_s({10.0, 30.0, 20.0, 1000.0}, 4), 25.0 * 4);  // the median ignores outliers
  EXPECT_DOUBLE_EQ(*eta_s({10.0}, 0), 0.0);
}

TEST(Progress, LineNamesTheTrialItsBoundTheConfigurationAndTheTimes) {
  TrialProgress p;
  p.trial = 3;
  p.trials_bound = 12;
  p.configuration = "free-lunch, micro-batch 8, accumulation 4";
  p.elapsed_s = 95.0;
  EXPECT_EQ(format_progress(p),
            "[trial 3 of ≤12] free-lunch, micro-batch 8, accumulation 4 | elapsed 95.00 s, "
            "ETA unknown | ");
  p.finished_trial_s = {30.0, 40.0};
  EXPECT_EQ(format_progress(p),
            "[trial 3 of ≤12] free-lunch, micro-batch 8, accumulation 4 | elapsed 95.00 s, "
            "ETA ≤ 5.8 min | ");  // 10 trials left (this one included) x 35 s
}

// The reference's composition: accumulation x the one micro-step (which carries the gradient
// communication) + the optimizer, of medians; no micro-step without communication is needed.
TEST(StepTiming, ReferenceComposesAccumulationTimesTheMicroStep) {
  PartTimes parts;
  parts.last_micro_s = {0.30, 0.20, 0.25};
  parts.optimizer_s = {0.05, 0.04, 0.06};
  const ComposedStep c = compose_reference_step(parts, /*grad_acc_steps=*/8);
  EXPECT_DOUBLE_EQ(c.step.median_s, 8 * 0.25 + 0.05);
  EXPECT_DOUBLE_EQ(c.step.min_s, 8 * 0.20 + 0.04);
  EXPECT_DOUBLE_EQ(c.step.max_s, 8 * 0.30 + 0.06);
  EXPECT_DOUBLE_EQ(c.last_micro_s, 0.25);
  EXPECT_THROW(compose_reference_step(PartTimes{}, 8), std::invalid_argument);
}

}  // namespace
}  // namespace gpudays
