// The stored-trial helpers a sweep and its replay share (sweep/trial_store.h).
#include "sweep/trial_store.h"

namespace gpudays {

// A trial's identity: its key finds it in the database before it runs.
TrialRecord trial_identity(const std::string& model_digest,
                           const ModelSpec& model,
                           const Cluster& cluster,
                           const SweepOptions& options,
                           const Configuration& config) {
  TrialRecord t;
  t.model_digest = model_digest;
  t.model = model.name;
  t.gpu = cluster.gpu->name;  // the host CPU's spec is named "cpu" (catalog/host_cpu.h)
  t.cluster = cluster.shape();
  t.config = config;
  t.memory_limit_bytes = options.memory_limit_bytes;
  t.rule = measurement_rule(options.strategy);
  return t;
}

// The stored trial of `record`'s key that a sweep reuses: none when absent, or killed from
// outside and to be measured again.
std::optional<TrialRecord> reusable(const ResultsDb& db,
                                    const TrialRecord& record,
                                    const SweepOptions& options) {
  auto done = db.find(record.key());
  if (done && done->measured.status == TrialStatus::kKilled && options.retry_killed) done.reset();
  return done;
}

TrialOutcome outcome_of(const TrialRecord& t) {
  const TrialMeasurement& m = t.measured;
  return TrialOutcome{m.status, m.step_time_median_s, m.peak_memory_bytes, m.message};
}

SearchOptions search_options(const Cluster& cluster, const SweepOptions& options) {
  SearchOptions search;
  search.strategy = options.strategy;
  search.memory_capacity_bytes =
      options.memory_limit_bytes > 0 ? options.memory_limit_bytes : cluster.gpu->memory_bytes;
  return search;
}

}  // namespace gpudays
