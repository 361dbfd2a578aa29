// The days-vs-cost trade-off among hardware options: the Pareto frontier (no other option is both
// at least as fast and at least as cheap, and strictly better in one), and the two questions a
// lab asks: the cheapest option that finishes within D days, the fastest within a budget.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gpudays {

struct TradeoffPoint {
  bool feasible = false;  // infeasible points (does not fit, no price) never win
  double training_days = 0.0;
  double cost_usd = 0.0;
};

// One flag per point: true when it is on the frontier. O(n^2); n is a few dozen options.
std::vector<bool> pareto_frontier(const std::vector<TradeoffPoint>& points);

// Index of the cheapest feasible point with days <= max_days (ties: the faster one).
std::optional<size_t> cheapest_within_days(const std::vector<TradeoffPoint>& points,
                                           double max_days);

// Index of the fastest feasible point with cost <= budget_usd (ties: the cheaper one).
std::optional<size_t> fastest_within_budget(const std::vector<TradeoffPoint>& points,
                                            double budget_usd);

}  // namespace gpudays
