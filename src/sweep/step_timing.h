// The benchmark's ways of timing an optimizer step, as pure arithmetic on measured durations:
// whole steps (their median and spread), the distinct parts of a step (a micro-step without
// gradient communication, the last micro-step with it, the optimizer) composed into a step, the
// reference benchmark's composition, and the check of a composition against whole measured steps.
// Measuring is left to `gpudays trial`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/trial_record.h"  // StepTiming

namespace gpudays {

// A composition and whole steps agree when they differ by at most this fraction of the whole step.
constexpr double kCompositionTolerance = 0.05;

struct Spread {
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
};
Spread spread_of(std::vector<double> seconds);  // throws std::invalid_argument when empty

// Durations of each part over the timed steps (the non-last micro-steps may be empty when a step
// has one micro-step).
struct PartTimes {
  std::vector<double> micro_s;       // micro-steps before the last: no gradient communication
  std::vector<double> last_micro_s;  // the last micro-step: with it
  std::vector<double> optimizer_s;   // unscale, clip, update, all-gather
};

struct ComposedStep {
  Spread step;           // (acc - 1) * micro + last + optimizer, of medians (min, max alike)
  double micro_s = 0.0;  // medians of the parts
  double last_micro_s = 0.0;
  double optimizer_s = 0.0;
};
// Throws std::invalid_argument when a part needed for `grad_acc_steps` was never measured.
ComposedStep compose_step(const PartTimes& parts, int64_t grad_acc_steps);

// The reference benchmark's step (its src/benchmarking/step_time.py, estimate_step_time) from steps
// of one micro-step: grad_acc_steps x the micro-step (which carries the gradient communication) +
// the optimizer. Medians, where the reference takes means; min and max alike. Throws
// std::invalid_argument when a part was never measured.
ComposedStep compose_reference_step(const PartTimes& parts, int64_t grad_acc_steps);

// (composed - whole) / whole.
double composition_error(double composed_s, double whole_s);
bool composition_agrees(double composed_s, double whole_s);

}  // namespace gpudays
