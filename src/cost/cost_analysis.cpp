// Cost-benefit analysis: one CostRow per hardware option, then the frontier and the queries.
#include "cost/cost_analysis.h"

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

inline constexpr double kHoursPerDay = 24.0;

inline constexpr const char* kFromPrices = "the prices and cost assumptions (and overrides)";
inline constexpr const char* kFromTimes = "the training time's source";

void check_figure(const CostRow& row, const char* what, double value, const char* inputs) {
  if (std::isfinite(value) && value >= 0.0 && value <= kMaxCostFigure) return;
  throw InputError(
      fmt::format("{} on {} x {}: the {} would be {:.3g}, not a finite amount in [0, "
                  "{:g}]; check {}",
                  row.model,
                  row.layout.world_size(),
                  row.gpu,
                  what,
                  value,
                  kMaxCostFigure,
                  inputs));
}

// Every figure a row shows, so that no format prints an overflowed or non-finite one.
void check_figures(const CostRow& row) {
  check_figure(row, "purchase cost (USD)", row.purchase.total_usd(), kFromPrices);
  if (!row.time.fits) return;
  check_figure(row, "training time (days)", row.time.training_days, kFromTimes);
  check_figure(row, "GPU-days", row.time.gpu_days, kFromTimes);
  if (const std::optional<TimeRange>& range = row.time.training_days_range) {
    check_figure(row, "low end of the training time (days)", range->low, kFromTimes);
    check_figure(row, "high end of the training time (days)", range->high, kFromTimes);
  }
  check_figure(row, "amortised cost (USD)", row.amortised_usd.value_or(0.0), kFromPrices);
  check_figure(row, "cloud cost (USD)", row.cloud_usd.value_or(0.0), kFromPrices);
  check_figure(row, "energy (kWh)", row.energy->kwh, kFromPrices);
  check_figure(row, "energy cost (USD)", row.energy->usd, kFromPrices);
  check_figure(row, "CO2 (kg)", row.energy->co2_kg, kFromPrices);
}

CostRow cost_row(const ModelSpec& model,
                 const HardwareOption& option,
                 const TrainingTimeSource& source,
                 const CostOptions& cost) {
  const CostAssumptions& a = cost.assumptions;
  CostRow row;
  row.model = model.name;
  row.gpu = option.gpu->name;
  row.layout = machine_layout(option.gpu_count, a.base_machines);
  row.price = gpu_price(*option.gpu, cost.price_overrides);
  row.purchase = purchase_cost(row.price.purchase_usd, row.layout, a.base_machines);
  row.time = source.training_time(model, *option.gpu, row.layout);
  if (!row.time.fits) {
    check_figures(row);
    return row;
  }
  row.amortised_usd =
      amortised_cost_usd(row.purchase.total_usd(), row.time.training_days, a.amortisation);
  row.cloud_usd =
      cloud_cost_usd(row.time.gpu_days * kHoursPerDay, row.price.cloud_usd_per_gpu_hour);
  row.energy = energy_use(
      option.gpu->tdp_w, row.layout.world_size(), row.time.training_days * kHoursPerDay, a.energy);
  check_figures(row);
  return row;
}

}  // namespace

std::string to_string(CostBasis basis) {
  switch (basis) {
    case CostBasis::kPurchase:
      return "purchase";
    case CostBasis::kAmortised:
      return "amortised";
    case CostBasis::kCloud:
      return "cloud";
  }
  return "?";
}

CostBasis parse_cost_basis(const std::string& text) {
  for (CostBasis b : {CostBasis::kPurchase, CostBasis::kAmortised, CostBasis::kCloud}) {
    if (text == to_string(b)) return b;
  }
  throw InputError(
      fmt::format("unknown cost basis '{}'; valid: purchase, amortised or cloud", text));
}

std::optional<double> basis_cost_usd(const CostRow& row, CostBasis basis) {
  if (!row.time.fits) return std::nullopt;
  switch (basis) {
    case CostBasis::kPurchase:
      return row.purchase.total_usd();
    case CostBasis::kAmortised:
      return row.amortised_usd;
    case CostBasis::kCloud:
      return row.cloud_usd;
  }
  return std::nullopt;
}

CostAnalysis analyse_costs(const ModelSpec& model,
                           const std::vector<HardwareOption>& options,
                           const TrainingTimeSource& source,
                           const CostOptions& cost) {
  CostAnalysis analysis;
  std::vector<TradeoffPoint> points;
  for (const HardwareOption& option : options) {
    analysis.rows.push_back(cost_row(model, option, source, cost));
    const CostRow& row = analysis.rows.back();
    const std::optional<double> usd = basis_cost_usd(row, cost.basis);
    points.push_back({usd.has_value(), row.time.training_days, usd.value_or(0.0)});
  }
  const std::vector<bool> frontier = pareto_frontier(points);
  for (size_t i = 0; i < frontier.size(); ++i) analysis.rows[i].on_frontier = frontier[i];
  if (cost.max_days) {
    analysis.cheapest_within_max_days = cheapest_within_days(points, *cost.max_days);
  }
  if (cost.budget_usd) {
    analysis.fastest_within_budget = fastest_within_budget(points, *cost.budget_usd);
  }
  return analysis;
}

}  // namespace gpudays
