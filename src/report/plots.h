// The report's plots as gnuplot scripts over data files (written under DIR/data and DIR/plots),
// drawn to PNG and SVG in one gnuplot run. Each plot function returns nullopt when it has
// nothing to draw (e.g. no option fits); the caption then says so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/report_data.h"

namespace gpudays {

struct GnuplotPlot {
  std::string name;  // file stem: NAME.png, NAME.svg, plots/NAME.gp
  int width_px = 1000;
  int height_px = 650;
  std::string body;  // gnuplot commands after the terminal is set; starts with `reset`
};

// Writes `contents` to DIR/RELATIVE (creating folders); returns RELATIVE.
std::string write_report_file(const std::string& dir,
                              const std::string& relative,
                              const std::string& contents);

// A name safe for files and gnuplot strings: [A-Za-z0-9._-], anything else becomes '_'.
std::string file_stem(const std::string& name);

// A gnuplot single-quoted string literal ('' stands for a quote inside).
std::string gnuplot_quote(const std::string& text);

// Log-axis tics at 1-2-5 steps inside [lo, hi]: ('$2k' 2000, '$5k' 5000, ...).
std::string log_tics(double lo, double hi, std::string (*label)(double));

// One distinct colour and point type per series (cycles after eight).
std::string series_colour(size_t index);
int series_point_type(size_t index);

std::optional<GnuplotPlot> cost_vs_days_plot(const ReportData& data,
                                             size_t model_index,
                                             const std::string& dir);
std::optional<GnuplotPlot> feasibility_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> gpu_days_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> speedup_plot(const ReportData& data, const std::string& dir);
// Heat-maps of the speed-up of free-lunch and of memory-saving (preset all) over naive: model rows
// x (GPU type x count) columns (plots_heatmap.cpp).
std::optional<GnuplotPlot> speedup_heatmap_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> measured_plot(const ReportData& data, const std::string& dir);

// Writes plots/NAME.gp for each plot and plots.gp drawing all of them, runs gnuplot once, and
// checks that every PNG and SVG exists. Returns the files written (relative to dir).
std::vector<std::string> draw_plots(const std::vector<GnuplotPlot>& plots,
                                    const std::string& dir,
                                    const GnuplotOptions& options);

}  // namespace gpudays
