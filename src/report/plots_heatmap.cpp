// The paper's speed-up heat-maps: for each model and each GPU type x count, naive days divided by
// the days of the fastest free-lunch and of the fastest memory-saving (preset all) configuration,
// one panel per tier, on a colour-blind-safe sequential palette (ColorBrewer YlGnBu).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/plots.h"

namespace gpudays {
namespace {

constexpr int kCellWidthPx = 62;
constexpr int kCellHeightPx = 24;

// Rows "x y speedup label" of the cells with a speed-up, and "x y label" of those without.
struct HeatmapCells {
  std::string values = "# column row speedup label\n";
  std::string missing = "# column row label\n";
  double max_speedup = 1.0;
};

HeatmapCells heatmap_cells(const ReportData& data, size_t tier) {
  HeatmapCells cells;
  for (size_t i = 0; i < data.models.size(); ++i) {
    size_t column = 0;
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      for (int64_t n : data.counts) {
        const TierDetail& d = tier_detail(data, i, j, n);
        const TrainingTime& naive = d.tiers[0];
        const TrainingTime& t = d.tiers[tier];
        if (!naive.fits || !t.fits) {
          cells.missing +=
              fmt::format("{} {} \"{}\"\n", column++, i, !t.fits ? "none fits" : "no naive");
          continue;
        }
        const double speedup = naive.training_days / t.training_days;
        cells.max_speedup = std::max(cells.max_speedup, speedup);
        cells.values += fmt::format("{} {} {:.6g} \"{:.2f}x\"\n", column++, i, speedup, speedup);
      }
    }
  }
  return cells;
}

}  // namespace

std::string gpu_count_column_tics(const ReportData& data) {
  std::vector<std::string> tics;
  size_t column = 0;
  for (const GpuSpec* g : data.gpus) {
    for (int64_t n : data.counts) {
      tics.push_back(
          fmt::format("{} {}", gnuplot_quote(fmt::format("{} x{}", g->name, n)), column++));
    }
  }
  return fmt::format("({})", fmt::join(tics, ", "));
}

std::string model_row_tics(const ReportData& data) {
  std::vector<std::string> names;
  for (size_t i = 0; i < data.models.size(); ++i) {
    names.push_back(fmt::format("{} {}", gnuplot_quote(data.models[i]->name), i));
  }
  return fmt::format("({})", fmt::join(names, ", "));
}

std::optional<GnuplotPlot> speedup_heatmap_plot(const ReportData& data, const std::string& dir) {
  if (data.models.empty() || data.gpus.empty()) return std::nullopt;
  const size_t columns = data.gpus.size() * data.counts.size();
  const int panel_height_px = static_cast<int>(150 + kCellHeightPx * data.models.size());
  GnuplotPlot p{"speedup_heatmap",
                static_cast<int>(std::max<size_t>(700, 260 + kCellWidthPx * columns)),
                2 * panel_height_px,
                ""};
  std::vector<HeatmapCells> panels;
  double max_speedup = 1.0;
  for (size_t tier = 1; tier < kReportTierCount; ++tier) {
    panels.push_back(heatmap_cells(data, tier));
    max_speedup = std::max(max_speedup, panels.back().max_speedup);
  }
  p.body = fmt::format(
      "reset\nset multiplot layout 2,1\nset xrange [-0.5:{}-0.5]\nset yrange [{}-0.5:-0.5]\n"
      "set xtics {} rotate by 40 right font ',8'\nset ytics {} font ',9'\nset tics scale 0\n"
      "set cbrange [1:{:.3g}]\nset cblabel 'speed-up over naive (x)'\n"
      "set palette defined (0 '#ffffcc', 1 '#a1dab4', 2 '#41b6c4', 3 '#2c7fb8')\n"
      "set bmargin 6\nunset key\n",
      columns,
      data.models.size(),
      gpu_count_column_tics(data),
      model_row_tics(data),
      max_speedup);
  for (size_t k = 0; k < panels.size(); ++k) {
    const std::string tier = to_string(kReportTiers[k + 1]);
    const std::string values =
        write_report_file(dir, fmt::format("data/heatmap_{}.dat", tier), panels[k].values);
    const std::string missing =
        write_report_file(dir, fmt::format("data/heatmap_{}_missing.dat", tier), panels[k].missing);
    p.body += fmt::format(
        "set title {0}\n"
        "plot '{1}' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1 noborder lc palette, \\\n"
        "  '{2}' using 1:2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#e0e0e0', \\\n"
        "  '{1}' using 1:2:4 with labels font ',8', \\\n"
        "  '{2}' using 1:2:3 with labels font ',7' tc rgb '#555555'\n",
        gnuplot_quote(fmt::format("Speed-up of {} over naive, predicted (planner best rows; "
                                  "naive days / {} days)",
                                  tier_label(kReportTiers[k + 1]),
                                  tier)),
        values,
        missing);
  }
  p.body += "unset multiplot\n";
  return p;
}

}  // namespace gpudays
