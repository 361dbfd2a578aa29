// The sweep's progress line: trial i of at most n (the search's upper bound on the trials it still
// plans), the configuration, the elapsed time and an estimate of the time left (the median
// duration of the trials run so far times the trials that may remain; itself an upper bound).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpudays {

struct TrialProgress {
  int trial = 1;         // this trial's number, from 1
  int trials_bound = 1;  // the most trials the search may run in all, this one included
  std::string configuration;
  double elapsed_s = 0.0;
  std::vector<double> finished_trial_s;  // wall time of each trial run so far (not reused ones)
};

// Seconds left for `trials_left` trials (this one included) at the median of `finished_s`;
// nullopt before any trial has finished.
std::optional<double> eta_s(const std::vector<double>& finished_s, int trials_left);

// "[trial 3 of ≤17] free-lunch, micro-batch 8 x 4 | elapsed 1.2 min, ETA ≤ 5.0 min | "; the
// sweep appends the outcome once the trial ends.
std::string format_progress(const TrialProgress& progress);

}  // namespace gpudays
