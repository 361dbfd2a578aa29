// Plots over the method tiers: the feasibility grid (model x GPU, one panel per GPU count,
// coloured by the lightest tier that fits) and GPU-days relative to the originally reported run.
// The speed-up plot is in plots_speedup.cpp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/plots.h"

namespace gpudays {
namespace {

constexpr int kPanelGpuWidthPx = 105;
constexpr int kModelRowHeightPx = 24;
constexpr int kColourBoxWidthPx = 240;

// gnuplot tic list: ('a' 0, 'b' 1, ...)
std::string tic_list(const std::vector<std::string>& labels) {
  std::vector<std::string> tics;
  for (size_t i = 0; i < labels.size(); ++i) {
    tics.push_back(fmt::format("{} {}", gnuplot_quote(labels[i]), i));
  }
  return fmt::format("({})", fmt::join(tics, ", "));
}

std::string feasibility_rows(const ReportData& data, int64_t count) {
  std::string rows = "# gpu_index model_index tier(0 none,1 all,2 free-lunch,3 naive) label\n";
  for (size_t i = 0; i < data.models.size(); ++i) {
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      const TierDetail& d = tier_detail(data, i, j, count);
      const int tier = lightest_fitting_tier(d);
      const double days = d.tiers[kReportTierCount - 1].training_days;
      const std::string label =
          tier < 0 ? "infeasible" : fmt::format("{:.{}f} d", days, days < 100 ? 1 : 0);
      rows += fmt::format("{} {} {} \"{}\"\n", j, i, tier < 0 ? 0 : 3 - tier, label);
    }
  }
  return rows;
}

std::string ratio_tic(double ratio) {
  return fmt::format("{:g}", ratio);
}

// GPU-days bars: one series per GPU over the models with a reported run; value labels at the
// bar tips; "n/f" where the option is infeasible.
struct GpuDaysBars {
  std::vector<size_t> models;  // indices of the models with a reported run
  std::vector<std::string> series;
  std::string labels = "# x y text\n";
  double lo = 1.0, hi = 1.0;  // ratio range, always including 1
};

void add_gpu_days_bars(const ReportData& data,
                       size_t gpu,
                       const std::string& dir,
                       GpuDaysBars& bars) {
  const double g = static_cast<double>(data.gpus.size());
  const double half = 0.4 / g;
  std::string rows;
  for (size_t k = 0; k < bars.models.size(); ++k) {
    const ModelSpec& model = *data.models[bars.models[k]];
    const TrainingTime& t =
        tier_detail(data, bars.models[k], gpu, data.detail_gpu_count).tiers[kReportTierCount - 1];
    const double x = static_cast<double>(k) + (static_cast<double>(gpu) - (g - 1) / 2.0) * 2 * half;
    if (!t.fits) {
      bars.labels += fmt::format("{:.4f} 1 \"n/f\"\n", x);
      continue;
    }
    const double ratio = t.gpu_days / model.reported_gpu_days();
    bars.lo = std::min(bars.lo, ratio);
    bars.hi = std::max(bars.hi, ratio);
    rows += fmt::format("{:.4f} {:.6g} {:.4f} {:.4f} {:.6g} {:.6g}\n",
                        x,
                        ratio,
                        x - 0.9 * half,
                        x + 0.9 * half,
                        std::min(1.0, ratio),
                        std::max(1.0, ratio));
    bars.labels += fmt::format(
        "{:.4f} {:.6g} \"{:.2f}\"\n", x, ratio >= 1 ? ratio * 1.12 : ratio / 1.12, ratio);
  }
  if (rows.empty()) return;
  const std::string file =
      write_report_file(dir,
                        fmt::format("data/gpu_days_{}.dat", file_stem(data.gpus[gpu]->name)),
                        "# x ratio xlow xhigh ylow yhigh\n" + rows);
  bars.series.push_back(fmt::format(
      "'{}' using 1:2:3:4:5:6 with boxxyerror fs solid 0.85 noborder lc rgb '{}' title {}",
      file,
      series_colour(gpu),
      gnuplot_quote(data.gpus[gpu]->name)));
}

}  // namespace

std::optional<GnuplotPlot> feasibility_plot(const ReportData& data, const std::string& dir) {
  if (data.models.empty() || data.gpus.empty() || data.counts.empty()) return std::nullopt;
  const size_t m = data.models.size(), g = data.gpus.size(), c = data.counts.size();
  const size_t cols = std::min<size_t>(c, 2), rows = (c + cols - 1) / cols;
  const int panel_w = 160 + kPanelGpuWidthPx * static_cast<int>(g);
  const int panel_h = std::max(300, 90 + kModelRowHeightPx * static_cast<int>(m));
  GnuplotPlot p{"feasibility",
                panel_w * static_cast<int>(cols) + kColourBoxWidthPx,
                panel_h * static_cast<int>(rows) + 50,
                ""};
  std::vector<std::string> model_names, gpu_names;
  for (const ModelSpec* model : data.models) model_names.push_back(model->name);
  for (const GpuSpec* gpu : data.gpus) gpu_names.push_back(gpu->name);
  const double right = 1.0 - static_cast<double>(kColourBoxWidthPx) / p.width_px;
  p.body = fmt::format(
      "reset\nset multiplot layout {},{} margins screen {:.3f}, {:.3f}, {:.3f}, {:.3f} spacing "
      "screen {:.3f}, {:.3f} title 'Lightest method tier that fits in memory (label: training "
      "days of the fastest configuration)'\n"
      "set xrange [-0.5:{}-0.5]\nset yrange [{}-0.5:-0.5]\nset xtics {} font ',9'\n"
      "set tics scale 0\nunset key\nset cbrange [-0.5:3.5]\nset palette maxcolors 4\n"
      "set palette defined (0 '#d9d9d9', 1 '#E69F00', 2 '#56B4E9', 3 '#009E73')\n"
      "set cbtics ('infeasible' 0, 'memory-saving (all)' 1, 'free-lunch' 2, 'naive' 3)\n"
      "set colorbox user origin screen {:.3f}, screen 0.3 size screen 0.015, screen 0.4\n",
      rows,
      cols,
      150.0 / p.width_px,
      right,
      60.0 / p.height_px,
      1.0 - 70.0 / p.height_px,
      60.0 / p.width_px,
      90.0 / p.height_px,
      g,
      m,
      tic_list(gpu_names),
      right + 0.01);
  for (size_t k = 0; k < c; ++k) {
    const std::string file =
        write_report_file(dir,
                          fmt::format("data/feasibility_{}gpus.dat", data.counts[k]),
                          feasibility_rows(data, data.counts[k]));
    const bool left = k % cols == 0, last = k + 1 == c;
    p.body += fmt::format("set title '{} GPU{}'\n{}\n{}\n",
                          data.counts[k],
                          data.counts[k] == 1 ? "" : "s",
                          left ? fmt::format("set ytics {} font ',9'", tic_list(model_names))
                               : std::string("unset ytics"),
                          last ? "set colorbox" : "unset colorbox");
    p.body += fmt::format(
        "plot '{0}' using 1:2:3 with image, '{0}' using 1:2:4 with labels "
        "font ',8'\n",
        file);
  }
  p.body += "unset multiplot\n";
  return p;
}

std::optional<GnuplotPlot> gpu_days_plot(const ReportData& data, const std::string& dir) {
  GpuDaysBars bars;
  for (size_t i = 0; i < data.models.size(); ++i) {
    if (data.models[i]->reported_gpu_days() > 0) bars.models.push_back(i);
  }
  if (bars.models.empty()) return std::nullopt;
  for (size_t j = 0; j < data.gpus.size(); ++j) add_gpu_days_bars(data, j, dir, bars);
  std::vector<std::string> tics;
  for (size_t k = 0; k < bars.models.size(); ++k) {
    const ModelSpec& m = *data.models[bars.models[k]];
    tics.push_back(fmt::format(
        "\"{}\\n({} GPUs x {:g} d)\" {}", m.name, m.reported->gpus, m.reported->days, k));
  }
  const std::string label_file = write_report_file(dir, "data/gpu_days_labels.dat", bars.labels);
  bars.series.push_back(fmt::format("'{}' using 1:2:3 with labels font ',8' notitle", label_file));
  const double lo = bars.lo / 1.5, hi = bars.hi * 1.5;
  GnuplotPlot p{"gpu_days_vs_reported",
                static_cast<int>(std::max<size_t>(900, 260 + 130 * bars.models.size())),
                620,
                ""};
  p.body = fmt::format(
      "reset\nset title 'GPU-days on {} GPUs relative to the originally reported run (below 1: "
      "fewer GPU-days than the original)'\nset logscale y\nset yrange [{:.3g}:{:.3g}]\n"
      "set ytics {}\nset xrange [-0.6:{}-0.4]\nset xtics ({}) font ',9'\nset bmargin 5\n"
      "set ylabel 'planned / reported GPU-days (log scale)'\nset grid ytics lc rgb '#e0e0e0'\n"
      "set key outside right top\n"
      "set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 1.5 lc rgb '#333333' front\n"
      "plot {}\n",
      data.detail_gpu_count,
      lo,
      hi,
      log_tics(lo, hi, ratio_tic),
      bars.models.size(),
      fmt::join(tics, ", "),
      fmt::join(bars.series, ", \\\n  "));
  return p;
}

}  // namespace gpudays
