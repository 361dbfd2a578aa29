// One bench request run on this machine: the device (the host CPU, measured, or the catalog GPU
// it names), the search space (--methods and the pinned fields), the plan and the sweep over the
// results database. `gpudays bench` runs one; `gpudays sweep` one per cell of its grid. Printing
// the summary and submitting to Slurm are the callers'.
#pragma once

#include <ostream>
#include <string>

#include "catalog/catalog.h"
#include "catalog/model_spec.h"
#include "search_space/search_space.h"
#include "sweep/bench_job.h"
#include "sweep/sweep.h"

namespace gpudays {

// The request's method sets: its --methods selection with its pinned fields on top; throws
// InputError when they contradict each other.
MethodSelection bench_methods(const BenchRequest& r);

// What a request runs on and how: the device (the host CPU measured for the request's ranks, or
// the catalog GPU), the cluster, the planner's options and the sweep's. Not copied: the cluster
// points at the device it holds.
class BenchSetup {
 public:
  BenchSetup(const std::string& config_dir, const BenchRequest& r, const Catalog& catalog);
  BenchSetup(const BenchSetup&) = delete;
  BenchSetup& operator=(const BenchSetup&) = delete;

  const Cluster& cluster() const { return cluster_; }
  const PlanOptions& plan_options() const { return plan_options_; }
  const SweepOptions& sweep_options() const { return sweep_options_; }

 private:
  GpuSpec host_;  // the host CPU, for --device cpu
  Cluster cluster_;
  PlanOptions plan_options_;
  SweepOptions sweep_options_;
};

// The most time the sweep of `prediction` can take: every configuration that fits, once, for its
// warm-up and timed steps plus a start-up each (the guided search runs fewer: a bound, not a
// forecast); `what` says how it was made.
double bench_time_bound_s(const PlanResult& prediction, int64_t timed_steps, std::string& what);

// The results database --db names, before anything is written beside it: an existing file must be
// a results database (opened, not changed), a new one needs its directory. InputError.
void check_results_db_path(const std::string& db, const Catalog& catalog);

// Runs the request's sweep here (trials as child processes, results into r.db), with progress
// lines on `progress`. Throws InputError for a bad request and EnvironmentError when the device
// cannot run trials, before any trial runs.
SweepSummary run_bench_here(const std::string& config_dir,
                            const BenchRequest& r,
                            const Catalog& catalog,
                            const ModelSpec& model,
                            std::ostream& progress);

}  // namespace gpudays
