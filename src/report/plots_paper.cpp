// The paper's figures drawn its way: averaged bars with 95% intervals (the memory-saving
// comparison, relative training speed with naive = 1) and the heat-map of the memory-saving gain
// over free-lunch, on colour-blind-safe palettes (Okabe and Ito; ColorBrewer PuOr, diverging).
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/paper_figures.h"
#include "report/plots.h"

namespace gpudays {
namespace {

struct Bar {
  std::string label;
  std::optional<MeanInterval> value;
};

// One bar per statistic: mean as a box, the interval as an error bar, "1.23x" above it; a bar
// without cells is left out. nullopt when no bar has cells.
std::optional<GnuplotPlot> bars_plot(const std::string& name,
                                     const std::string& title,
                                     const std::string& ylabel,
                                     const std::vector<Bar>& bars,
                                     const std::string& dir) {
  std::string rows = "# x mean low high label colour\n";
  std::vector<std::string> tics;
  double top = 1.0;
  for (size_t i = 0; i < bars.size(); ++i) {
    tics.push_back(fmt::format("{} {}", gnuplot_quote(bars[i].label), i));
    const std::optional<MeanInterval>& v = bars[i].value;
    if (!v) continue;
    top = std::max(top, v->high);
    rows += fmt::format("{} {:.6g} {:.6g} {:.6g} \"{:.2f}x (n={})\" {}\n",
                        i,
                        v->mean,
                        v->low,
                        v->high,
                        v->mean,
                        v->count,
                        std::stoi(series_colour(i).substr(1), nullptr, 16));
  }
  if (rows.find('\n') == rows.size() - 1) return std::nullopt;  // the header only
  const std::string file = write_report_file(dir, "data/" + name + ".dat", rows);
  GnuplotPlot p{name, 760, 560, ""};
  p.body = fmt::format(
      "reset\nset title {}\nset style fill solid 0.85 noborder\nset boxwidth 0.6\n"
      "set xrange [-0.6:{}-0.4]\nset yrange [0:{:.3g}]\nset xtics ({})\nset ylabel {}\n"
      "set grid ytics lc rgb '#e5e5e5'\nunset key\n"
      "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#D55E00' front\n"
      "plot '{}' using 1:2:6 with boxes lc rgb variable, \\\n"
      "  '' using 1:3:(0):($4-$3) with vectors heads size screen 0.008,90 lw 2 lc rgb "
      "'#000000', \\\n"
      "  '' using 1:4:5 with labels offset char 0,0.8 font ',10'\n",
      gnuplot_quote(title),
      bars.size(),
      top * 1.18,
      fmt::join(tics, ", "),
      gnuplot_quote(ylabel),
      file);
  return p;
}

}  // namespace

std::optional<GnuplotPlot> memory_saving_bars_plot(const ReportData& data, const std::string& dir) {
  const MemorySavingBars b = memory_saving_bars(data);
  return bars_plot("memory_saving_paper",
                   "Comparing memory-saving methods, the paper's way (predicted; cells with more "
                   "than 1 GPU)",
                   "speed-up over the worst memory-saving configuration (x)",
                   {{"optimal", b.optimal},
                    {"median", b.median},
                    {"worst", b.worst},
                    {"free lunch", b.free_lunch}},
                   dir);
}

std::optional<GnuplotPlot> relative_speed_bars_plot(const ReportData& data,
                                                    const std::string& dir) {
  const RelativeSpeedBars b = relative_speed_bars(data);
  return bars_plot(
      "relative_speed_paper",
      "Relative training speed, the paper's way (predicted; naive = 1)",
      "speed relative to naive (x): naive days / days",
      {{"analytic (FLOPs / peak)", b.analytic}, {"naive", b.naive}, {"optimal", b.optimal}},
      dir);
}

std::optional<GnuplotPlot> free_lunch_gain_heatmap_plot(const ReportData& data,
                                                        const std::string& dir) {
  if (data.models.empty() || data.gpus.empty()) return std::nullopt;
  std::string values = "# column row gain_percent label\n";
  std::string missing = "# column row\n";
  for (size_t i = 0; i < data.models.size(); ++i) {
    size_t column = 0;
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      for (int64_t n : data.counts) {
        const std::optional<double> gain = free_lunch_gain(tier_detail(data, i, j, n).methods);
        if (gain) {
          values +=
              fmt::format("{} {} {:.6g} \"{}\"\n", column, i, *gain * 100.0, percent_text(*gain));
        } else {
          missing += fmt::format("{} {}\n", column, i);
        }
        ++column;
      }
    }
  }
  const size_t columns = data.gpus.size() * data.counts.size();
  const std::string values_file = write_report_file(dir, "data/gain_free_lunch.dat", values);
  const std::string missing_file =
      write_report_file(dir, "data/gain_free_lunch_missing.dat", missing);
  GnuplotPlot p{"memory_saving_gain_heatmap",
                static_cast<int>(std::max<size_t>(700, 260 + 62 * columns)),
                static_cast<int>(190 + 24 * data.models.size()),
                ""};
  p.body = fmt::format(
      "reset\nset title {}\nset xrange [-0.5:{}-0.5]\nset yrange [{}-0.5:-0.5]\n"
      "set xtics {} rotate by 40 right font ',8'\nset ytics {} font ',9'\nset tics scale 0\n"
      "set cbrange [-100:100]\nset cblabel 'gain over free-lunch (%)'\n"
      "set palette defined (-100 '#b35806', -50 '#f1a340', 0 '#f7f7f7', 50 '#998ec3', "
      "100 '#542788')\nset bmargin 6\nunset key\n"
      "plot '{}' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1 noborder lc palette, \\\n"
      "  '{}' using 1:2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#d9d9d9', \\\n"
      "  '{}' using 1:2:4 with labels font ',8'\n",
      gnuplot_quote("Speed-up of the fastest memory-saving configuration over free-lunch-only, "
                    "the paper's way (predicted; grey: either does not fit)"),
      columns,
      data.models.size(),
      gpu_count_column_tics(data),
      model_row_tics(data),
      values_file,
      missing_file,
      values_file);
  return p;
}

}  // namespace gpudays
