// The benchmark's search over the settings space: which trials to run, in which order, and when to
// stop. Three strategies: `exhaustive` (every method set, every micro-batch from 1 doubled until
// one fails, each timed; the best is the fastest of all), `reference` (the reference benchmark's
// rule: the same doubling, but a method set's result is only its largest power-of-two micro-batch
// that fits, and the best is the fastest of those) and `guided` (the planner skips method sets
// that cannot fit by a safe margin, starts each micro-batch search at the planner's largest
// fitting micro-batch, tries the most promising method sets first, and stops once the planner's
// bound, calibrated on the trials so far, says no remaining method set can beat the best measured
// one). Trials run through a TrialExecutor (a child process in production; a function in tests).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "plan/planner.h"
#include "results/trial_record.h"

namespace gpudays {

struct TrialOutcome {
  TrialStatus status = TrialStatus::kOk;
  double step_time_s = 0.0;       // median of the timed steps
  int64_t peak_memory_bytes = 0;  // measured
  std::string message;
};

using TrialExecutor = std::function<TrialOutcome(const Configuration&)>;

enum class SearchStrategy { kExhaustive, kGuided, kReference };
std::string to_string(SearchStrategy strategy);                 // "exhaustive", ...
SearchStrategy parse_search_strategy(const std::string& text);  // throws InputError naming them
// The rule a strategy's trials are measured and stored under: reference for kReference.
MeasurementRule measurement_rule(SearchStrategy strategy);

struct SearchOptions {
  SearchStrategy strategy = SearchStrategy::kGuided;
  int64_t memory_capacity_bytes = 0;  // per device
  // Skip a method set when even micro-batch 1 is predicted to need this multiple of the capacity.
  double skip_memory_factor = 1.5;
  // The bound: measured / predicted may be this much below the lowest ratio seen so far.
  double bound_safety = 0.8;
  // Last, every micro-batch of each method set whose best measured step is within this fraction of
  // the best one is timed (the planner's error changes from one micro-batch to the next).
  double refine_margin = 0.10;
  // Called before each trial with its number (from 1) and the most trials the search may run in
  // all, this one included (an upper bound: an out-of-memory trial, a failure or the guided
  // search's bound can end it sooner). Optional.
  std::function<void(int trial, int trials_bound)> on_trial;
};

struct SearchTrial {
  Configuration request;
  TrialOutcome outcome;
  double predicted_step_time_s = 0.0;
  int64_t predicted_memory_bytes = 0;
};

struct SearchResult {
  std::vector<SearchTrial> trials;  // in the order they ran
  // The fastest trial with status ok (reference: the fastest of each method set's pick).
  std::optional<SearchTrial> best;
  int method_sets_total = 0;
  int method_sets_skipped = 0;  // ruled out by the planner's memory prediction
  int method_sets_pruned = 0;   // never tried: the bound said they cannot win
};

// `prediction` holds the planner's rows for every method set and micro-batch of the request.
SearchResult run_search(const PlanResult& prediction,
                        const TrialExecutor& execute,
                        const SearchOptions& options);

}  // namespace gpudays
