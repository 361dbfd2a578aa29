// What a sweep and its replay share about stored trials: a trial's identity (its key in the
// results database), the stored trial a sweep reuses, the outcome the search sees, and the
// search's options for a cluster.
#pragma once

#include <optional>
#include <string>

#include "results/results_db.h"
#include "sweep/search.h"
#include "sweep/sweep.h"

namespace gpudays {

// A trial's identity: its key finds it in the database before it runs.
TrialRecord trial_identity(const std::string& model_digest,
                           const ModelSpec& model,
                           const Cluster& cluster,
                           const SweepOptions& options,
                           const Configuration& config);

// The stored trial of `record`'s key that a sweep reuses: none when absent, or killed from
// outside and to be measured again.
std::optional<TrialRecord> reusable(const ResultsDb& db,
                                    const TrialRecord& record,
                                    const SweepOptions& options);

TrialOutcome outcome_of(const TrialRecord& t);

SearchOptions search_options(const Cluster& cluster, const SweepOptions& options);

}  // namespace gpudays
