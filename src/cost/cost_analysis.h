// Cost-benefit analysis of hardware options for one model: for each GPU type and count, the
// training days (from a TrainingTimeSource), purchase, amortised, rental and energy cost, the
// days-vs-cost Pareto frontier, and the --max-days / --budget answers. Rendering is the CLI's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "cost/cost_assumptions.h"
#include "cost/hardware_cost.h"
#include "cost/pareto.h"
#include "cost/prices.h"
#include "cost/time_source.h"

namespace gpudays {

// The largest figure of a row (a cost in USD, energy in kWh, CO2 in kg, days) that can come from a
// run rather than from absurd inputs: 1e15 USD is ten times the world's yearly output, and the
// largest --budget. analyse_costs refuses a row with a larger or non-finite figure, so nothing
// downstream prints inf, a negative zero or an overflowed integer.
inline constexpr double kMaxCostFigure = 1.0e15;

// What "cost" means on the frontier and in the queries.
enum class CostBasis { kPurchase, kAmortised, kCloud };
std::string to_string(CostBasis basis);
CostBasis parse_cost_basis(const std::string& text);  // throws InputError naming choices

struct HardwareOption {
  const GpuSpec* gpu = nullptr;
  int64_t gpu_count = 1;
};

struct CostRow {
  std::string model;
  std::string gpu;  // catalog name
  ClusterShape layout;
  TrainingTime time;
  GpuPrice price;
  PurchaseCost purchase;
  std::optional<double> amortised_usd;  // nullopt when the option cannot run
  std::optional<double> cloud_usd;      // nullopt: cannot run, or no rental price known
  std::optional<EnergyUse> energy;      // nullopt when the option cannot run
  bool on_frontier = false;
};

struct CostOptions {
  CostAssumptions assumptions;
  PriceOverrides price_overrides;  // keyed by catalog name (canonical_price_overrides)
  CostBasis basis = CostBasis::kPurchase;
  std::optional<double> max_days;
  std::optional<double> budget_usd;
};

struct CostAnalysis {
  std::vector<CostRow> rows;                       // in the order of the options
  std::optional<size_t> cheapest_within_max_days;  // index into rows
  std::optional<size_t> fastest_within_budget;
};

// The row's cost on `basis`; nullopt when it cannot run or has no such price.
std::optional<double> basis_cost_usd(const CostRow& row, CostBasis basis);

// Throws InputError for a GPU count no machine layout holds, and for a row with a figure that is
// not finite or above kMaxCostFigure (naming the row and the figure); options that cannot run are
// kept.
CostAnalysis analyse_costs(const ModelSpec& model,
                           const std::vector<HardwareOption>& options,
                           const TrainingTimeSource& source,
                           const CostOptions& cost);

}  // namespace gpudays
