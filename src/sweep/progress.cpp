// Progress line and time-left estimate.
#include "sweep/progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/units.h"
#include "sweep/step_timing.h"

namespace gpudays {

std::optional<double> eta_s(const std::vector<double>& finished_s, int trials_left) {
  if (finished_s.empty()) return std::nullopt;
  return spread_of(finished_s).median_s * std::max(0, trials_left);
}

std::string format_progress(const TrialProgress& p) {
  const auto eta = eta_s(p.finished_trial_s, p.trials_bound - p.trial + 1);
  return fmt::format("[trial {} of ≤{}] {} | elapsed {}, ETA {} | ",
                     p.trial,
                     p.trials_bound,
                     p.configuration,
                     format_duration_s(p.elapsed_s),
                     eta ? "≤ " + format_duration_s(*eta) : std::string("unknown"));
}

}  // namespace gpudays
