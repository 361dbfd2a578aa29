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

// Log-axis tics at 1-2-5 steps inside [lo, hi]: ('$2k' 2000, '$5k' 5000, ...); fewer over more
// than 30 decades. Throws InputError unless 0 < lo <= hi are finite.
std::string log_tics(double lo, double hi, std::string (*label)(double));

// One distinct colour and point type per series (cycles after eight).
std::string series_colour(size_t index);
int series_point_type(size_t index);

// The cost axis of a cost-vs-days plot: the purchase (ours), or the amortised experiment cost,
// purchase x days / (years x 365) (the paper's "Experiment Cost", scripts/plotting/
// training_costs.py, normalized_cost).
enum class CostAxis { kPurchase, kAmortised };
// nullopt when no option runs or every option costs $0 (a log scale cannot show it).
std::optional<GnuplotPlot> cost_vs_days_plot(const ReportData& data,
                                             size_t model_index,
                                             const std::string& dir,
                                             CostAxis axis = CostAxis::kPurchase);
std::optional<GnuplotPlot> feasibility_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> gpu_days_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> speedup_plot(const ReportData& data, const std::string& dir);
// Heat-map tics: one column per GPU type x count, "('a100 x8' 3, ...)", and one row per model,
// "('pythia-1b' 0, ...)" (plots_heatmap.cpp).
std::string gpu_count_column_tics(const ReportData& data);
std::string model_row_tics(const ReportData& data);
// Heat-maps of the speed-up of free-lunch and of memory-saving (preset all) over naive: model rows
// x (GPU type x count) columns (plots_heatmap.cpp).
std::optional<GnuplotPlot> speedup_heatmap_plot(const ReportData& data, const std::string& dir);
// The paper's figures its way (plots_paper.cpp; definitions in paper_figures.h): the averaged
// memory-saving bars, relative training speed bars (naive = 1) and the gain of memory-saving over
// free-lunch as a heat-map.
std::optional<GnuplotPlot> memory_saving_bars_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> relative_speed_bars_plot(const ReportData& data, const std::string& dir);
std::optional<GnuplotPlot> free_lunch_gain_heatmap_plot(const ReportData& data,
                                                        const std::string& dir);
std::optional<GnuplotPlot> measured_plot(const ReportData& data, const std::string& dir);

// Writes plots/NAME.gp for each plot and plots.gp drawing all of them, runs gnuplot once, and
// checks that every PNG and SVG exists (EnvironmentError when one is missing or empty). Returns
// the files written (relative to dir).
std::vector<std::string> draw_plots(const std::vector<GnuplotPlot>& plots,
                                    const std::string& dir,
                                    const GnuplotOptions& options);

}  // namespace gpudays
