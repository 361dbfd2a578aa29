// The fit row's columns and the fit command's table and JSON.
#include "rows/fit_rows.h"

#include <fmt/format.h>

#include "common/json_text.h"
#include "common/units.h"
#include "cost/cost_format.h"

namespace gpudays {
namespace {

Cell optional_cell(std::optional<double> v) {
  return v ? Cell{*v} : Cell{};
}

// A figure of a row that fits; null for one that cannot run.
template <typename Get>
Column<FitRow> if_fits(const char* name, Get get, Display display = Display::kHidden) {
  return {
      name, [get](const FitRow& r) { return r.cost.time.fits ? Cell{get(r)} : Cell{}; }, display};
}

Cell range_end(const FitRow& r, double TimeRange::*end) {
  if (!r.cost.time.fits || !r.cost.time.training_days_range) return Cell{};
  return Cell{(*r.cost.time.training_days_range).*end};
}

std::vector<FitRow> all_rows(const FitReport& report) {
  std::vector<FitRow> rows = report.rows;
  if (report.largest) rows.push_back(*report.largest);
  return rows;
}

void print_largest(std::ostream& out, const FitReport& report) {
  out << fmt::format(
      "Largest compute-optimal model of the {} family ({:g} tokens per parameter, "
      "Hoffmann et al. 2022) within the limits:\n",
      report.family,
      report.tokens_per_param);
  if (!report.largest) {
    out << "  none: not even the smallest rung of the ladder fits\n";
    return;
  }
  const FitRow& r = *report.largest;
  out << fmt::format(
      "  {}: {} layers, d_model {}, {} heads, d_ffn {}; {} parameters on {} tokens "
      "(Chinchilla loss fit, Hoffmann et al. Eq. 10: {:.3f})\n",
      r.model,
      r.n_layers,
      r.d_model,
      r.n_heads,
      r.d_ffn,
      format_count(r.params),
      format_count(static_cast<int64_t>(r.tokens)),
      r.chinchilla_loss.value_or(0.0));
}

}  // namespace

const std::vector<Column<FitRow>>& fit_columns() {
  using D = Display;
  using R = FitRow;
  static const std::vector<Column<R>> kColumns = {
      {"answer", [](const R& r) { return Cell{to_string(r.answer)}; }},
      {"model", [](const R& r) { return Cell{r.model}; }, D::kPlain},
      {"gpu", [](const R& r) { return Cell{r.cost.gpu}; }, D::kPlain},
      {"gpu_count", [](const R& r) { return Cell{r.cost.layout.world_size()}; }, D::kPlain},
      {"num_nodes", [](const R& r) { return Cell{r.cost.layout.num_nodes}; }},
      {"params", [](const R& r) { return Cell{r.params}; }, D::kCount},
      {"tokens", [](const R& r) { return Cell{r.tokens}; }},
      {"n_layers", [](const R& r) { return Cell{r.n_layers}; }},
      {"d_model", [](const R& r) { return Cell{r.d_model}; }},
      {"n_heads", [](const R& r) { return Cell{r.n_heads}; }},
      {"d_ffn", [](const R& r) { return Cell{r.d_ffn}; }},
      {"fits", [](const R& r) { return Cell{r.cost.time.fits}; }},
      if_fits(
          "training_days", [](const R& r) { return r.cost.time.training_days; }, D::kFixed1),
      {"training_days_low", [](const R& r) { return range_end(r, &TimeRange::low); }},
      {"training_days_high", [](const R& r) { return range_end(r, &TimeRange::high); }},
      {"peak_memory_bytes", [](const R& r) { return optional_cell(r.peak_memory_bytes); }, D::kGib},
      {"least_memory_bytes",
       [](const R& r) { return optional_cell(r.least_memory_bytes); },
       D::kGib},
      {"most_memory_bytes", [](const R& r) { return optional_cell(r.most_memory_bytes); }, D::kGib},
      if_fits("mfu", [](const R& r) { return r.cost.time.mfu; }),
      {"purchase_usd", [](const R& r) { return Cell{r.cost.purchase.total_usd()}; }},
      {"amortised_usd", [](const R& r) { return optional_cell(r.cost.amortised_usd); }},
      {"cloud_usd", [](const R& r) { return optional_cell(r.cost.cloud_usd); }},
      {"cost_usd", [](const R& r) { return optional_cell(r.cost_usd); }, D::kCount},
      {"within_days", [](const R& r) { return Cell{r.within_days}; }},
      {"within_budget", [](const R& r) { return Cell{r.within_budget}; }},
      {"ok", [](const R& r) { return Cell{r.ok()}; }, D::kPlain},
      {"chinchilla_loss", [](const R& r) { return optional_cell(r.chinchilla_loss); }},
      {"settings", [](const R& r) { return Cell{r.cost.time.settings}; }},
      {"note",
       [](const R& r) { return Cell{r.ok() ? r.cost.time.settings : r.reason}; },
       D::kPlain},
  };
  return kColumns;
}

void print_fit(std::ostream& out, const FitReport& report, RowFormat format) {
  const RowSet rows = make_row_set("fit_row", fit_columns(), all_rows(report));
  if (format == RowFormat::kJson) {
    nlohmann::json doc = json_document("fit_row");
    doc["question"] = report.question;
    doc["rows"] = rows_json(make_row_set("fit_row", fit_columns(), report.rows));
    doc["largest_compute_optimal"] =
        report.largest ? row_object(fit_columns(), *report.largest) : nlohmann::json();
    out << json_text(doc, 2) << "\n";
    return;
  }
  if (format != RowFormat::kTable) {
    write_rows(out, rows, format);
    return;
  }
  out << report.question << "\n";
  write_rows(out, make_row_set("fit_row", fit_columns(), report.rows), RowFormat::kTable);
  if (report.hardware_mode) {
    if (report.rows.empty()) {
      out << "No option meets the limits.\n";
    } else {
      const FitRow& r = report.rows.front();
      out << fmt::format("Cheapest: {} x {}, {:.1f} days, {}\n",
                         r.cost.layout.world_size(),
                         r.cost.gpu,
                         r.cost.time.training_days,
                         format_usd_or_na(r.cost_usd));
    }
    return;
  }
  print_largest(out, report);
  if (report.largest) {
    write_rows(out, make_row_set("fit_row", fit_columns(), {*report.largest}), RowFormat::kTable);
  }
  if (!report.written_model.empty()) {
    out << fmt::format("Model file: {} (gpudays plan --model-file {} ...)\n",
                       report.written_model,
                       report.written_model);
  }
}

}  // namespace gpudays
