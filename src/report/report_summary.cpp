// The report's opening summary: per model, the fastest and the cheapest hardware option under the
// paper's two lines (100 days, $100K purchase), and where nothing fits at all. From the cost rows.
#include <fmt/format.h>

#include "cost/cost_format.h"
#include "report/report.h"

namespace gpudays {
namespace {

bool within_lines(const CostRow& r) {
  return r.time.fits && r.time.training_days <= kSummaryMaxDays &&
         r.purchase.total_usd() <= kSummaryBudgetUsd;
}

std::string option(const CostRow& r) {
  return fmt::format("{} x {}: {:.1f} days, {}",
                     r.layout.world_size(),
                     r.gpu,
                     r.time.training_days,
                     format_usd(r.purchase.total_usd()));
}

// "rtx-3090 (1, 2 GPUs); rtx-a6000 (1 GPU)", or "fits on every option".
std::string nothing_fits(const CostAnalysis& c) {
  std::string out, gpu, counts;
  int n = 0;
  const auto flush = [&] {
    if (!gpu.empty())
      out += fmt::format("{}{} ({} GPU{})", out.empty() ? "" : "; ", gpu, counts, n > 1 ? "s" : "");
  };
  for (const CostRow& r : c.rows) {
    if (r.time.fits) continue;
    if (r.gpu != gpu) {
      flush();
      gpu = r.gpu;
      counts.clear();
      n = 0;
    }
    counts += fmt::format("{}{}", counts.empty() ? "" : ", ", r.layout.world_size());
    ++n;
  }
  flush();
  return out.empty() ? "fits on every option" : out;
}

// When no option is under both lines: the fastest that runs at all, with its cost.
std::string nothing_under_lines(const CostAnalysis& c) {
  const CostRow* fastest = nullptr;
  for (const CostRow& r : c.rows) {
    if (r.time.fits && (fastest == nullptr || r.time.training_days < fastest->time.training_days))
      fastest = &r;
  }
  return fastest == nullptr ? "nothing under both lines; nothing fits"
                            : "nothing under both lines; fastest at all: " + option(*fastest);
}

}  // namespace

SummaryRow summarise(const CostAnalysis& analysis) {
  SummaryRow s;
  for (size_t k = 0; k < analysis.rows.size(); ++k) {
    const CostRow& r = analysis.rows[k];
    if (!within_lines(r)) continue;
    const CostRow* f = s.fastest ? &analysis.rows[*s.fastest] : nullptr;
    const CostRow* c = s.cheapest ? &analysis.rows[*s.cheapest] : nullptr;
    if (f == nullptr || r.time.training_days < f->time.training_days) s.fastest = k;
    if (c == nullptr || r.purchase.total_usd() < c->purchase.total_usd() ||
        (r.purchase.total_usd() == c->purchase.total_usd() &&
         r.time.training_days < c->time.training_days)) {
      s.cheapest = k;
    }
  }
  return s;
}

DocTable summary_table(const ReportData& data) {
  DocTable t;
  t.name = "summary";
  t.headers = {
      "model",
      fmt::format("fastest under {:g} days and {}", kSummaryMaxDays, format_usd(kSummaryBudgetUsd)),
      "cheapest under both lines",
      "does not fit at all on"};
  for (size_t i = 0; i < data.models.size(); ++i) {
    const CostAnalysis& c = data.costs[i];
    const SummaryRow s = summarise(c);
    const std::string none = nothing_under_lines(c);
    t.rows.push_back({data.models[i]->name,
                      s.fastest ? option(c.rows[*s.fastest]) : none,
                      s.cheapest ? option(c.rows[*s.cheapest]) : none,
                      nothing_fits(c)});
  }
  t.caption = fmt::format(
      "Predicted: training days from the {}; cost: purchase of the GPUs and the base machine "
      "(the GPU catalog and {}). The lines are the paper's: {:g} days and {} of hardware. Every "
      "option: the per-model detail and costs.csv.",
      data.cost_time_source,
      data.cost.assumptions.source_path,
      kSummaryMaxDays,
      format_usd(kSummaryBudgetUsd));
  return t;
}

}  // namespace gpudays
