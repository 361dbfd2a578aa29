// Pareto frontier and the max-days / budget queries over (training days, cost) points.
#include "cost/pareto.h"

namespace gpudays {
namespace {

bool dominates(const TradeoffPoint& a, const TradeoffPoint& b) {
  return a.training_days <= b.training_days && a.cost_usd <= b.cost_usd &&
         (a.training_days < b.training_days || a.cost_usd < b.cost_usd);
}

// True when `a` is preferred to `b` by (primary, then secondary), both smaller-is-better.
bool lexicographically_less(double a_primary,
                            double a_secondary,
                            double b_primary,
                            double b_secondary) {
  return a_primary < b_primary || (a_primary == b_primary && a_secondary < b_secondary);
}

}  // namespace

std::vector<bool> pareto_frontier(const std::vector<TradeoffPoint>& points) {
  std::vector<bool> on_frontier(points.size(), false);
  for (size_t i = 0; i < points.size(); ++i) {
    if (!points[i].feasible) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      dominated = j != i && points[j].feasible && dominates(points[j], points[i]);
    }
    on_frontier[i] = !dominated;
  }
  return on_frontier;
}

std::optional<size_t> cheapest_within_days(const std::vector<TradeoffPoint>& points,
                                           double max_days) {
  std::optional<size_t> best;
  for (size_t i = 0; i < points.size(); ++i) {
    const TradeoffPoint& p = points[i];
    if (!p.feasible || p.training_days > max_days) continue;
    if (!best ||
        lexicographically_less(
            p.cost_usd, p.training_days, points[*best].cost_usd, points[*best].training_days)) {
      best = i;
    }
  }
  return best;
}

std::optional<size_t> fastest_within_budget(const std::vector<TradeoffPoint>& points,
                                            double budget_usd) {
  std::optional<size_t> best;
  for (size_t i = 0; i < points.size(); ++i) {
    const TradeoffPoint& p = points[i];
    if (!p.feasible || p.cost_usd > budget_usd) continue;
    if (!best ||
        lexicographically_less(
            p.training_days, p.cost_usd, points[*best].training_days, points[*best].cost_usd)) {
      best = i;
    }
  }
  return best;
}

}  // namespace gpudays
