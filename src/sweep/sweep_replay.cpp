// A sweep replayed over the stored trials alone: how far the database already holds it
// (sweep/sweep.h, replay_sweep).
#include "catalog/model_loader.h"
#include "sweep/sweep.h"
#include "sweep/trial_store.h"

namespace gpudays {

namespace {

// Thrown by the replay's executor at the first trial the database lacks.
struct NotStored {};

}  // namespace

SweepReplay replay_sweep(const ModelSpec& model,
                         const Cluster& cluster,
                         const PlanOptions& plan_options,
                         const SweepOptions& options,
                         const ResultsDb& db) {
  const PlanResult prediction = plan(model, cluster, plan_options);
  const std::string digest = model_digest(model);
  SweepReplay replay;
  int bound = 0;
  SearchOptions search = search_options(cluster, options);
  search.on_trial = [&](int trial, int trials_bound) {
    replay.trials_stored = trial - 1;
    bound = trials_bound - (trial - 1);
  };
  auto execute = [&](const Configuration& r) {
    const auto done = reusable(db, trial_identity(digest, model, cluster, options, r), options);
    if (!done) throw NotStored{};
    return outcome_of(*done);
  };
  try {
    const SearchResult result = run_search(prediction, execute, search);
    replay.trials_stored = static_cast<int>(result.trials.size());
    replay.best = result.best;
  } catch (const NotStored&) {
    replay.trials_left_bound = bound;
  }
  return replay;
}

}  // namespace gpudays
