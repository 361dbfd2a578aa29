// Cost vs training days for one model: one point series per GPU type (labelled with the GPU
// count), the Pareto frontier as a staircase, log scales on both axes. Options that do not fit
// are named in the legend entry of their GPU.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/plots.h"

namespace gpudays {
namespace {

// "rtx-3090 (no fit: 1, 2 GPUs)" when some counts cannot run.
std::string series_title(const std::string& gpu,
                         const std::vector<int64_t>& no_fit,
                         bool any_fits) {
  if (no_fit.empty()) return gpu;
  if (!any_fits) return gpu + " (infeasible on every count)";
  std::string counts;
  for (int64_t n : no_fit) counts += (counts.empty() ? "" : ", ") + std::to_string(n);
  return fmt::format("{} (infeasible on {} GPUs)", gpu, counts);
}

double axis_usd(const CostRow& r, CostAxis axis) {
  return axis == CostAxis::kPurchase ? r.purchase.total_usd() : r.amortised_usd.value_or(0.0);
}

// The Pareto frontier, fastest first: the cost analysis's for purchase; for the amortised cost
// every option cheaper than every faster one.
std::string frontier_rows(const CostAnalysis& analysis, CostAxis axis) {
  std::vector<const CostRow*> options;
  for (const CostRow& r : analysis.rows) {
    if (r.time.fits && (axis == CostAxis::kAmortised || r.on_frontier)) options.push_back(&r);
  }
  std::sort(options.begin(), options.end(), [axis](const CostRow* a, const CostRow* b) {
    if (a->time.training_days != b->time.training_days)
      return a->time.training_days < b->time.training_days;
    return axis_usd(*a, axis) < axis_usd(*b, axis);
  });
  std::string rows = fmt::format("# training_days {}_usd\n",
                                 axis == CostAxis::kPurchase ? "purchase" : "amortised");
  double cheapest = 0.0;
  for (const CostRow* r : options) {
    const double usd = axis_usd(*r, axis);
    if (axis == CostAxis::kAmortised && cheapest > 0.0 && usd >= cheapest) continue;
    cheapest = usd;
    rows += fmt::format("{:.6g} {:.6g}\n", r->time.training_days, usd);
  }
  return rows;
}

// Axis limits that leave room around the points on log scales: [min / pad, max * pad].
inline constexpr double kDaysPad = 1.8;
inline constexpr double kUsdPad = 2.0;

// The positive values' range (a log scale cannot show 0); empty while hi is 0.
struct LogRange {
  double lo = 0.0, hi = 0.0;
  void add(double v) {
    if (!(v > 0.0)) return;
    lo = lo == 0.0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::string tics(double pad, std::string (*label)(double)) const {
    return log_tics(lo / pad, hi * pad, label);
  }
  std::string gnuplot(double pad) const {
    return fmt::format("[{:.4g}:{:.4g}]", lo / pad, hi * pad);
  }
  bool shows(double v, double pad) const { return v >= lo / pad && v <= hi * pad; }
};

std::string days_tic(double days) {
  return fmt::format("{:g}", days);
}

std::string usd_tic(double usd) {
  if (usd >= 1e6) return fmt::format("${:g}M", usd / 1e6);
  if (usd >= 1e3) return fmt::format("${:g}k", usd / 1e3);
  return fmt::format("${:g}", usd);
}

// Dotted guides at the reference's title question, "$100K or 100 days", when in range ($100K
// only on the purchase axis).
std::string reference_guides(const LogRange& days, const LogRange& usd, CostAxis axis) {
  std::string out;
  if (days.shows(100.0, kDaysPad)) {
    out +=
        "set arrow from first 100, graph 0 to first 100, graph 1 nohead dt 3 lc rgb '#999999'\n"
        "set label '100 days' at first 100, graph 0.97 offset char 0.5,0 font ',9' tc rgb "
        "'#777777'\n";
  }
  if (axis == CostAxis::kPurchase && usd.shows(100000.0, kUsdPad)) {
    out +=
        "set arrow from graph 0, first 100000 to graph 1, first 100000 nohead dt 3 lc rgb "
        "'#999999'\n"
        "set label '$100K' at graph 0.01, first 100000 offset char 0,0.6 font ',9' tc rgb "
        "'#777777'\n";
  }
  return out;
}

}  // namespace

std::optional<GnuplotPlot> cost_vs_days_plot(const ReportData& data,
                                             size_t model_index,
                                             const std::string& dir,
                                             CostAxis axis) {
  const CostAnalysis& analysis = data.costs[model_index];
  const std::string model = file_stem(data.models[model_index]->name);
  const bool purchase = axis == CostAxis::kPurchase;
  const std::string prefix = purchase ? "" : "amortised_";
  std::vector<std::string> series;
  LogRange days, usd;
  for (size_t g = 0; g < data.gpus.size(); ++g) {
    const std::string& gpu = data.gpus[g]->name;
    std::string rows;
    std::vector<int64_t> no_fit;
    for (const CostRow& r : analysis.rows) {
      if (r.gpu != gpu) continue;
      if (!r.time.fits) {
        no_fit.push_back(r.layout.world_size());
        continue;
      }
      days.add(r.time.training_days);
      usd.add(axis_usd(r, axis));
      rows += fmt::format("{:.6g} {:.6g} \"×{}\"\n",
                          r.time.training_days,
                          axis_usd(r, axis),
                          r.layout.world_size());
    }
    if (rows.empty()) {  // a legend entry without points says that nothing runs
      series.push_back(fmt::format("NaN with points pt {} ps 1.6 lc rgb '{}' title {}",
                                   series_point_type(g),
                                   series_colour(g),
                                   gnuplot_quote(series_title(gpu, no_fit, /*any_fits=*/false))));
      continue;
    }
    const std::string file = write_report_file(
        dir,
        fmt::format("data/{}cost_{}_{}.dat", prefix, model, file_stem(gpu)),
        fmt::format("# training_days {}_usd gpu_count\n", purchase ? "purchase" : "amortised") +
            rows);
    series.push_back(fmt::format(
        "'{0}' using 1:2 with points pt {1} ps 1.6 lc rgb '{2}' title {3}, \\\n"
        "  '{0}' using 1:2:3 with labels offset char 1.4,0.7 font ',9' tc rgb '{2}' notitle",
        file,
        series_point_type(g),
        series_colour(g),
        gnuplot_quote(series_title(gpu, no_fit, /*any_fits=*/true))));
  }
  if (days.hi == 0.0 || usd.hi == 0.0) return std::nullopt;  // no option runs, or all cost $0
  const std::string frontier = write_report_file(
      dir, fmt::format("data/{}frontier_{}.dat", prefix, model), frontier_rows(analysis, axis));
  GnuplotPlot p{prefix + "cost_vs_days_" + model, 1000, 640, ""};
  p.body = fmt::format(
      "reset\nset title {}\nset logscale xy\nset xrange {}\nset yrange {}\n"
      "set grid xtics ytics lc rgb '#d0d0d0'\n"
      "set xlabel 'training days (planner best configuration, log scale)'\n"
      "set ylabel {}\n"
      "set xtics {}\nset ytics {}\n"
      "set key bottom left box opaque spacing 1.2\n"
      "{}plot {}, \\\n  '{}' using 1:2 with steps lw 2 dt 2 lc rgb '#444444' title 'Pareto "
      "frontier'\n",
      gnuplot_quote(data.models[model_index]->name +
                    (purchase ? ": purchase cost vs training days (labels: number of GPUs)"
                              : ": amortised experiment cost vs training days, the paper's "
                                "(labels: number of GPUs)")),
      days.gnuplot(kDaysPad),
      usd.gnuplot(kUsdPad),
      gnuplot_quote(purchase ? "purchase cost: GPUs + base machines (log scale)"
                             : fmt::format("amortised cost: purchase x days / ({:g} x 365) "
                                           "(log scale)",
                                           data.cost.assumptions.amortisation.years)),
      days.tics(kDaysPad, days_tic),
      usd.tics(kUsdPad, usd_tic),
      reference_guides(days, usd, axis),
      fmt::join(series, ", \\\n  "),
      frontier);
  return p;
}

}  // namespace gpudays
