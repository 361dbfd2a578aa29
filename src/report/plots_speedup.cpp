// Speed-up of the free-lunch and all tiers over naive (naive days / tier days, fastest
// configuration of each), one panel per GPU type at the report's detail GPU count.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/plots.h"

namespace gpudays {
namespace {

constexpr const char* kTierColours[] = {"", "#56B4E9", "#0072B2"};  // free-lunch, all

struct Panel {
  std::vector<std::string> series;
  double max_speedup = 1.0;
};

Panel speedup_panel(const ReportData& data, size_t gpu, const std::string& dir) {
  Panel panel;
  const std::string stem = file_stem(data.gpus[gpu]->name);
  std::string no_baseline;
  for (size_t t = 1; t < kReportTierCount; ++t) {
    std::string rows;
    for (size_t i = 0; i < data.models.size(); ++i) {
      const TierDetail& d = tier_detail(data, i, gpu, data.detail_gpu_count);
      if (!d.tiers[0].fits || !d.tiers[t].fits) {
        if (t == 1) no_baseline += fmt::format("{} 0.25\n", i);
        continue;
      }
      const double speedup = d.tiers[0].training_days / d.tiers[t].training_days;
      panel.max_speedup = std::max(panel.max_speedup, speedup);
      const double x = static_cast<double>(i) + (t == 1 ? -0.19 : 0.19);
      rows += fmt::format(
          "{:.3f} {:.6g} {:.3f} {:.3f} 0 {:.6g}\n", x, speedup, x - 0.17, x + 0.17, speedup);
    }
    if (rows.empty()) continue;
    const std::string file =
        write_report_file(dir,
                          fmt::format("data/speedup_{}_{}.dat", stem, to_string(kReportTiers[t])),
                          "# x speedup xlow xhigh ylow yhigh\n" + rows);
    panel.series.push_back(fmt::format(
        "'{}' using 1:2:3:4:5:6 with boxxyerror fs solid 0.9 noborder lc rgb '{}' title {}",
        file,
        kTierColours[t],
        gnuplot_quote(tier_label(kReportTiers[t]))));
  }
  if (!no_baseline.empty()) {
    const std::string file =
        write_report_file(dir, fmt::format("data/speedup_{}_no_naive.dat", stem), no_baseline);
    panel.series.push_back(
        fmt::format("'{}' using 1:2 with points pt 2 ps 1.5 lw 2 lc rgb '#D55E00' "
                    "title 'naive is infeasible (no baseline)'",
                    file));
  }
  return panel;
}

}  // namespace

std::optional<GnuplotPlot> speedup_plot(const ReportData& data, const std::string& dir) {
  if (data.models.empty() || data.gpus.empty()) return std::nullopt;
  std::vector<Panel> panels;
  double max_speedup = 1.0;
  for (size_t j = 0; j < data.gpus.size(); ++j) {
    panels.push_back(speedup_panel(data, j, dir));
    max_speedup = std::max(max_speedup, panels.back().max_speedup);
  }
  const size_t cols = data.gpus.size() > 1 ? 2 : 1;
  const size_t rows = (data.gpus.size() + cols - 1) / cols;
  GnuplotPlot p{"speedup_over_naive",
                static_cast<int>(std::max<size_t>(700, 80 + 45 * data.models.size()) * cols),
                static_cast<int>(60 + 430 * rows),
                ""};
  p.body = fmt::format(
      "reset\nset multiplot layout {},{} title 'Speed-up over naive of the fastest configuration "
      "of each tier, {} GPUs (naive days / tier days)'\n"
      "set xrange [-0.6:{}-0.4]\nset yrange [0:{:.3g}]\nset xtics {} rotate by 40 right "
      "font ',8'\nset ylabel 'speed-up (x)'\nset grid ytics lc rgb '#e5e5e5'\n"
      "set key top left font ',9' opaque box\nset bmargin 7\n"
      "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#333333' front\n",
      rows,
      cols,
      data.detail_gpu_count,
      data.models.size(),
      max_speedup * 1.15,
      model_row_tics(data));
  for (size_t j = 0; j < panels.size(); ++j) {
    const std::string title = gnuplot_quote(data.gpus[j]->name);
    p.body += fmt::format("set title {}\n", title);
    p.body += panels[j].series.empty()
                  ? "plot NaN notitle\n"
                  : fmt::format("plot {}\n", fmt::join(panels[j].series, ", \\\n  "));
  }
  p.body += "unset multiplot\n";
  return p;
}

}  // namespace gpudays
