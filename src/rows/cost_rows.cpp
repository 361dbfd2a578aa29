// The cost row's columns: the option, its training time, prices with sources, purchase,
// amortised, cloud and energy costs, the frontier.
#include "rows/cost_rows.h"

namespace gpudays {
namespace {

Cell optional_cell(std::optional<double> v) {
  return v ? Cell{*v} : Cell{};
}

// A figure of an option that runs; null for one that cannot.
template <typename Get>
Column<CostRow> if_fits(const char* name, Get get, Display display = Display::kHidden) {
  return {name, [get](const CostRow& r) { return r.time.fits ? Cell{get(r)} : Cell{}; }, display};
}

// An end of the planner's range of the training days (plan/error_band.h); null for a measured
// time or an option that cannot run.
Cell range_end(const CostRow& r, double TimeRange::*end) {
  if (!r.time.fits || !r.time.training_days_range) return Cell{};
  return Cell{(*r.time.training_days_range).*end};
}

}  // namespace

const std::vector<Column<CostRow>>& cost_columns() {
  using D = Display;
  using R = CostRow;
  static const std::vector<Column<R>> kColumns = {
      {"model", [](const R& r) { return Cell{r.model}; }},
      {"gpu", [](const R& r) { return Cell{r.gpu}; }, D::kPlain},
      {"gpu_count", [](const R& r) { return Cell{r.layout.world_size()}; }, D::kPlain},
      {"num_nodes", [](const R& r) { return Cell{r.layout.num_nodes}; }, D::kPlain},
      {"gpus_per_node", [](const R& r) { return Cell{r.layout.gpus_per_node}; }},
      {"fits", [](const R& r) { return Cell{r.time.fits}; }},
      if_fits(
          "training_days", [](const R& r) { return r.time.training_days; }, D::kFixed1),
      {"training_days_low", [](const R& r) { return range_end(r, &TimeRange::low); }},
      {"training_days_high", [](const R& r) { return range_end(r, &TimeRange::high); }},
      {"training_days_range_basis", [](const R& r) { return Cell{r.time.range_basis}; }},
      if_fits(
          "gpu_days", [](const R& r) { return r.time.gpu_days; }, D::kFixed1),
      if_fits(
          "mfu", [](const R& r) { return r.time.mfu; }, D::kPercent),
      {"settings", [](const R& r) { return Cell{r.time.settings}; }, D::kPlain},
      {"reason", [](const R& r) { return Cell{r.time.reason}; }, D::kPlain},
      {"time_source", [](const R& r) { return Cell{r.time.provenance}; }},
      {"gpu_usd", [](const R& r) { return Cell{r.price.purchase_usd}; }},
      {"gpu_price_source", [](const R& r) { return Cell{r.price.purchase_source}; }},
      {"cloud_usd_per_gpu_hour",
       [](const R& r) { return optional_cell(r.price.cloud_usd_per_gpu_hour); }},
      {"cloud_price_source", [](const R& r) { return Cell{r.price.cloud_source}; }},
      {"purchase_usd", [](const R& r) { return Cell{r.purchase.total_usd()}; }, D::kPlain},
      {"gpus_usd", [](const R& r) { return Cell{r.purchase.gpus_usd}; }},
      {"base_machines_usd", [](const R& r) { return Cell{r.purchase.base_machines_usd}; }},
      {"amortised_usd", [](const R& r) { return optional_cell(r.amortised_usd); }, D::kPlain},
      {"cloud_usd", [](const R& r) { return optional_cell(r.cloud_usd); }, D::kPlain},
      {"energy_kwh", [](const R& r) { return r.energy ? Cell{r.energy->kwh} : Cell{}; }, D::kPlain},
      {"energy_usd", [](const R& r) { return r.energy ? Cell{r.energy->usd} : Cell{}; }},
      {"co2_kg", [](const R& r) { return r.energy ? Cell{r.energy->co2_kg} : Cell{}; }, D::kPlain},
      {"on_frontier", [](const R& r) { return Cell{r.on_frontier}; }, D::kPlain},
  };
  return kColumns;
}

}  // namespace gpudays
