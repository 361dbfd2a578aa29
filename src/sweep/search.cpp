// Exhaustive, reference and planner-guided searches over method sets and micro-batches.
#include "sweep/search.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "common/enum_names.h"

namespace gpudays {
namespace {

constexpr EnumName<SearchStrategy> kStrategyNames[] = {{SearchStrategy::kGuided, "guided"},
                                                       {SearchStrategy::kExhaustive, "exhaustive"},
                                                       {SearchStrategy::kReference, "reference"}};

// Planner rows of one method set, by increasing micro-batch.
struct MethodGroup {
  MethodSet methods;
  std::vector<const PlanRow*> rows;
  size_t start = 0;                // where the micro-batch search starts
  double optimistic_step_s = 0.0;  // the planner's best step time among plausible micro-batches
};

std::vector<MethodGroup> group_rows(const PlanResult& prediction) {
  std::vector<MethodGroup> groups;
  for (const PlanRow& row : prediction.rows) {
    if (groups.empty() || groups.back().methods != row.config.methods) {
      groups.push_back(MethodGroup{row.config.methods, {}, 0, 0.0});
    }
    groups.back().rows.push_back(&row);
  }
  for (MethodGroup& g : groups) {
    std::sort(g.rows.begin(), g.rows.end(), [](const PlanRow* a, const PlanRow* b) {
      return a->config.micro_batch_size < b->config.micro_batch_size;
    });
  }
  return groups;
}

// The guided search's last stage times at most this many micro-batches near its best trial.
constexpr size_t kRefineTrials = 24;

class Searcher {
 public:
  Searcher(const TrialExecutor& execute, const SearchOptions& options)
      : execute_(execute), options_(options) {}

  // Runs one trial and records it; returns whether it succeeded. `group_left`: the most trials of
  // this method set still to run, this one included.
  bool run(const PlanRow& row, size_t group_left) {
    if (options_.on_trial) {
      const size_t done = result_.trials.size();
      options_.on_trial(static_cast<int>(done + 1),
                        static_cast<int>(done + group_left + later_groups_bound_));
    }
    SearchTrial t;
    t.request =
        Configuration{row.config.methods, row.config.micro_batch_size, row.config.grad_acc_steps};
    t.predicted_step_time_s = row.step_time_s;
    t.predicted_memory_bytes = static_cast<int64_t>(row.memory.least_bytes());
    t.outcome = execute_(t.request);
    const bool ok = t.outcome.status == TrialStatus::kOk;
    if (ok) {
      lowest_ratio_ = std::min(lowest_ratio_, t.outcome.step_time_s / t.predicted_step_time_s);
      if (!result_.best || t.outcome.step_time_s < result_.best->outcome.step_time_s) {
        result_.best = t;
      }
    }
    result_.trials.push_back(std::move(t));
    return ok;
  }

  // Doubles from `start` while the measured memory says the next micro-batch may fit; halves from
  // `start` on out-of-memory. A crash or a time-out ends the group.
  void search_micro_batches(const MethodGroup& g) {
    size_t i = g.start;
    if (!run(*g.rows[i], guided_group_bound(g))) {
      while (i > 0 && result_.trials.back().outcome.status == TrialStatus::kOutOfMemory) {
        --i;
        if (run(*g.rows[i], i + 1)) return;
      }
      return;
    }
    while (i + 1 < g.rows.size() && next_may_fit(*g.rows[i], *g.rows[i + 1])) {
      ++i;
      if (!run(*g.rows[i], g.rows.size() - i)) return;
    }
  }

  // The most trials a guided micro-batch search of `g` runs: up from its start, or down to 1.
  static size_t guided_group_bound(const MethodGroup& g) {
    return std::max(g.rows.size() - g.start, g.start + 1);
  }

  // The most trials of the method sets after the current one (for the progress bound).
  void set_later_groups_bound(size_t trials) { later_groups_bound_ = trials; }

  bool beaten(const MethodGroup& g) const {
    if (!result_.best) return false;
    const double bound = g.optimistic_step_s * lowest_ratio_ * options_.bound_safety;
    return bound >= result_.best->outcome.step_time_s;
  }

  // The planner orders a method set's micro-batches only as well as it predicts them, and its
  // error changes from one micro-batch to the next: time every untried micro-batch (down to 1,
  // up while the next may fit) of each method set whose best measured step is within `margin` of
  // the best one, closest first, within `budget` trials.
  void refine(const std::vector<MethodGroup>& groups, double margin, size_t budget) {
    std::vector<const MethodGroup*> close;
    for (const MethodGroup& g : groups) {
      const double best = best_of(g.methods);
      if (best > 0.0 && best <= (1.0 + margin) * result_.best->outcome.step_time_s) {
        close.push_back(&g);
      }
    }
    std::stable_sort(close.begin(), close.end(), [&](const MethodGroup* a, const MethodGroup* b) {
      return best_of(a->methods) < best_of(b->methods);
    });
    for (const MethodGroup* g : close) {
      for (size_t j = 0; j < g->rows.size() && budget > 0; ++j) {
        if (tried(g->rows[j]->config) || !may_fit(*g, j)) continue;
        set_later_groups_bound(0);
        run(*g->rows[j], budget--);
      }
    }
  }

  SearchResult& result() { return result_; }

 private:
  // Scales the planner's memory for the next micro-batch by how far its prediction for this one
  // was off; probes when that estimate is within 10% of the capacity.
  bool next_may_fit(const PlanRow& done, const PlanRow& next) const {
    return next_may_fit(result_.trials.back(), done, next);
  }

  bool next_may_fit(const SearchTrial& trial, const PlanRow& done, const PlanRow& next) const {
    const double measured = static_cast<double>(trial.outcome.peak_memory_bytes);
    // What each configuration needs at the least: the allocator's usual slack is capped by the
    // card, so the predicted reservation stops growing there while the requirement does not.
    const double scale = measured > 0 ? measured / done.memory.least_bytes() : 1.0;
    return next.memory.least_bytes() * scale <= 1.1 * options_.memory_capacity_bytes;
  }

  // The best measured step of a method set; 0 when none succeeded.
  double best_of(const MethodSet& m) const {
    double best = 0.0;
    for (const SearchTrial& t : result_.trials) {
      if (t.request.methods != m || t.outcome.status != TrialStatus::kOk) continue;
      if (best == 0.0 || t.outcome.step_time_s < best) best = t.outcome.step_time_s;
    }
    return best;
  }

  bool tried(const Configuration& config) const {
    for (const SearchTrial& t : result_.trials) {
      if (t.request == config) return true;
    }
    return false;
  }

  // Whether row j of the group may fit: no micro-batch at or below it ran out of memory, and the
  // largest successful smaller one, its memory rescaled as in next_may_fit, says it may.
  bool may_fit(const MethodGroup& g, size_t j) const {
    const SearchTrial* below = nullptr;
    size_t below_row = 0;
    const int64_t micro = g.rows[j]->config.micro_batch_size;
    for (const SearchTrial& t : result_.trials) {
      if (t.request.methods != g.methods || t.request.micro_batch_size > micro) continue;
      if (t.outcome.status == TrialStatus::kOutOfMemory) return false;
      if (t.outcome.status != TrialStatus::kOk) continue;
      if (below == nullptr || t.request.micro_batch_size > below->request.micro_batch_size) {
        below = &t;
      }
    }
    if (below == nullptr) return true;  // only larger micro-batches ran: smaller ones fit
    while (g.rows[below_row]->config != below->request) ++below_row;
    return next_may_fit(*below, *g.rows[below_row], *g.rows[j]);
  }

  static const MethodGroup* group_of(const std::vector<MethodGroup>& groups, const MethodSet& m) {
    for (const MethodGroup& g : groups) {
      if (g.methods == m) return &g;
    }
    return nullptr;
  }

  const TrialExecutor& execute_;
  const SearchOptions& options_;
  SearchResult result_;
  double lowest_ratio_ = std::numeric_limits<double>::infinity();
  size_t later_groups_bound_ = 0;
};

// The reference's result: each method set's largest successful micro-batch (its doubling stops at
// the first failure), and the fastest of those.
std::optional<SearchTrial> fastest_pick(const std::vector<SearchTrial>& trials) {
  std::map<std::string, const SearchTrial*> picks;  // by method set
  for (const SearchTrial& t : trials) {
    if (t.outcome.status == TrialStatus::kOk) picks[describe(t.request.methods)] = &t;
  }
  std::optional<SearchTrial> best;
  for (const auto& [methods, t] : picks) {
    if (!best || t->outcome.step_time_s < best->outcome.step_time_s) best = *t;
  }
  return best;
}

void prepare_guided(std::vector<MethodGroup>& groups, const SearchOptions& o, int& skipped) {
  const double capacity = static_cast<double>(o.memory_capacity_bytes);
  std::vector<MethodGroup> kept;
  for (MethodGroup& g : groups) {
    if (g.rows.front()->memory.least_bytes() > o.skip_memory_factor * capacity) {
      ++skipped;
      continue;
    }
    g.optimistic_step_s = g.rows.front()->step_time_s;
    for (size_t i = 0; i < g.rows.size(); ++i) {
      if (g.rows[i]->memory.least_bytes() <= capacity) g.start = i;
      if (g.rows[i]->memory.least_bytes() <= o.skip_memory_factor * capacity) {
        g.optimistic_step_s = std::min(g.optimistic_step_s, g.rows[i]->step_time_s);
      }
    }
    kept.push_back(g);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const MethodGroup& a, const MethodGroup& b) {
    return a.optimistic_step_s < b.optimistic_step_s;
  });
  groups = std::move(kept);
}

}  // namespace

std::string to_string(SearchStrategy strategy) {
  return enum_name<SearchStrategy>(kStrategyNames, strategy);
}

SearchStrategy parse_search_strategy(const std::string& text) {
  return parse_enum<SearchStrategy>(kStrategyNames, text, "strategy");
}

MeasurementRule measurement_rule(SearchStrategy strategy) {
  return strategy == SearchStrategy::kReference ? MeasurementRule::kReference
                                                : MeasurementRule::kGpudays;
}

SearchResult run_search(const PlanResult& prediction,
                        const TrialExecutor& execute,
                        const SearchOptions& options) {
  std::vector<MethodGroup> groups = group_rows(prediction);
  Searcher searcher(execute, options);
  SearchResult& result = searcher.result();
  result.method_sets_total = static_cast<int>(groups.size());
  // later[i]: the most trials of the method sets after the i-th.
  std::vector<size_t> later(groups.size() + 1, 0);
  if (options.strategy != SearchStrategy::kGuided) {
    for (size_t i = groups.size(); i-- > 0;) later[i] = later[i + 1] + groups[i].rows.size();
    for (size_t i = 0; i < groups.size(); ++i) {
      searcher.set_later_groups_bound(later[i + 1]);
      const MethodGroup& g = groups[i];
      for (size_t j = 0; j < g.rows.size(); ++j) {
        if (!searcher.run(*g.rows[j], g.rows.size() - j)) break;
      }
    }
    if (options.strategy == SearchStrategy::kReference) result.best = fastest_pick(result.trials);
    return std::move(result);
  }
  prepare_guided(groups, options, result.method_sets_skipped);
  later.assign(groups.size() + 1, kRefineTrials);
  for (size_t i = groups.size(); i-- > 0;) {
    later[i] = later[i + 1] + Searcher::guided_group_bound(groups[i]);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (searcher.beaten(groups[i])) {
      result.method_sets_pruned = static_cast<int>(groups.size() - i);
      break;
    }
    searcher.set_later_groups_bound(later[i + 1]);
    searcher.search_micro_batches(groups[i]);
  }
  if (result.best) searcher.refine(groups, options.refine_margin, kRefineTrials);
  return std::move(result);
}

}  // namespace gpudays
