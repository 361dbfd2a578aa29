// Step-time arithmetic: spreads, composition of parts, the composition check.
#include "sweep/step_timing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

Spread spread_of(std::vector<double> seconds) {
  if (seconds.empty()) throw std::invalid_argument("no durations to summarise");
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  const double median = n % 2 == 1 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  return Spread{median, seconds.front(), seconds.back()};
}

ComposedStep compose_step(const PartTimes& parts, int64_t grad_acc_steps) {
  if (grad_acc_steps < 1) throw std::invalid_argument("accumulation below 1");
  if (parts.last_micro_s.empty() || parts.optimizer_s.empty() ||
      (grad_acc_steps > 1 && parts.micro_s.empty())) {
    throw std::invalid_argument("a part of the step was never measured");
  }
  const double others = static_cast<double>(grad_acc_steps - 1);
  const Spread last = spread_of(parts.last_micro_s);
  const Spread optimizer = spread_of(parts.optimizer_s);
  const Spread micro = grad_acc_steps > 1 ? spread_of(parts.micro_s) : Spread{};
  ComposedStep c;
  c.micro_s = micro.median_s;
  c.last_micro_s = last.median_s;
  c.optimizer_s = optimizer.median_s;
  c.step.median_s = others * micro.median_s + last.median_s + optimizer.median_s;
  c.step.min_s = others * micro.min_s + last.min_s + optimizer.min_s;
  c.step.max_s = others * micro.max_s + last.max_s + optimizer.max_s;
  return c;
}

ComposedStep compose_reference_step(const PartTimes& parts, int64_t grad_acc_steps) {
  if (grad_acc_steps < 1) throw std::invalid_argument("accumulation below 1");
  if (parts.last_micro_s.empty() || parts.optimizer_s.empty()) {
    throw std::invalid_argument("a part of the step was never measured");
  }
  const double acc = static_cast<double>(grad_acc_steps);
  const Spread micro = spread_of(parts.last_micro_s);
  const Spread optimizer = spread_of(parts.optimizer_s);
  ComposedStep c;
  c.last_micro_s = micro.median_s;
  c.optimizer_s = optimizer.median_s;
  c.step.median_s = acc * micro.median_s + optimizer.median_s;
  c.step.min_s = acc * micro.min_s + optimizer.min_s;
  c.step.max_s = acc * micro.max_s + optimizer.max_s;
  return c;
}

double composition_error(double composed_s, double whole_s) {
  return (composed_s - whole_s) / whole_s;
}

bool composition_agrees(double composed_s, double whole_s) {
  return std::abs(composition_error(composed_s, whole_s)) <= kCompositionTolerance;
}

}  // namespace gpudays
