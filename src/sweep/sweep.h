// A benchmark sweep: runs the search (sweep/search.h) with each trial in its own child process
// under a time limit, reuses trials already in the results database, records every new trial
// (with provenance) the moment it ends, rejects impossible timings, and prints a progress line
// (sweep/progress.h). With parts timing, the first trial of each method set (its family) also
// times whole steps to check the composition; a family whose check fails falls back to whole steps.
// The trials run on the cluster's device: the host CPU for a DeviceKind::kCpu spec, else CUDA.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "catalog/model_spec.h"
#include "plan/planner.h"
#include "results/results_db.h"
#include "sweep/search.h"
#include "sweep/step_timing.h"

namespace gpudays {

struct SweepOptions {
  std::vector<std::string> trial_command;  // argv prefix; "--spec FILE" is appended
  std::string model_file;                  // when the model is not from the catalog
  double trial_timeout_s = 600.0;
  int64_t warmup_steps = 1;
  int64_t timed_steps = 3;
  int64_t memory_limit_bytes = 0;  // 0: the device's memory
  StepTiming timing =
      StepTiming::kParts;   // the gpudays rule's; the reference strategy's is its own
  int64_t check_steps = 3;  // whole steps checking each family's first composition (parts timing)
  SearchStrategy strategy = SearchStrategy::kGuided;
  // Where the sweep makes its own directory of trial specs and outputs, removed when it ends
  // (default: TMPDIR, else /tmp).
  std::string work_dir;
  // Measure again, once per run, a stored trial that a signal from outside killed (status
  // "killed"); false: reuse it as it is.
  bool retry_killed = true;
  // Where each trial's whole stderr is kept (SWEEP.trial-NNN.stderr, SWEEP unique to the sweep);
  // "": not kept. `gpudays bench` sets it from --trial-stderr or $GPUDAYS_TRIAL_STDERR_DIR.
  std::string stderr_dir;
};

struct SweepSummary {
  SearchResult search;
  MeasurementRule rule = MeasurementRule::kGpudays;  // what its trials were measured under
  int trials_reused = 0;                             // found in the database
  int trials_run = 0;                                // run now
  // Run now but not stored as the key's trial: another sweep stored it first; this measurement is
  // kept as a repeat (ResultsDb::repeat_count) and the stored one is used.
  int trials_not_stored = 0;
};

SweepSummary run_sweep(const ModelSpec& model,
                       const Cluster& cluster,
                       const PlanOptions& plan_options,
                       const SweepOptions& options,
                       ResultsDb& db,
                       std::ostream& progress);

// What a sweep would still do, from the database alone: the search replayed over the stored
// trials (its order is fixed by the plan and their outcomes) up to the first trial not stored.
struct SweepReplay {
  int trials_stored = 0;            // the search's trials found in the database, in its order
  int trials_left_bound = 0;        // the most trials still to run; 0: the search is complete
  std::optional<SearchTrial> best;  // when complete
};
SweepReplay replay_sweep(const ModelSpec& model,
                         const Cluster& cluster,
                         const PlanOptions& plan_options,
                         const SweepOptions& options,
                         const ResultsDb& db);

// A folder for the trials' standard error (--trial-stderr) that exists or can be made, before any
// trial runs; throws InputError.
void check_stderr_dir(const std::string& dir);

// Before any trial: can this build and machine run trials on `device` ("cuda" or "cpu")? Runs
// `gpudays trial --check-device`; throws EnvironmentError with its one-line reason, and nothing is
// recorded.
void check_trial_device(const std::string& device);

}  // namespace gpudays
