// Plot plumbing: file writing, series styles, the predicted-vs-measured scatter, and the single
// gnuplot run that draws every plot to PNG and SVG.
#include "report/plots.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/output_files.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

// Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2008), yellow last.
constexpr const char* kColours[] = {
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"};
constexpr int kPointTypes[] = {7, 5, 9, 13, 11, 15, 4, 6};

// The most decades a log axis labels at 1-2-5 steps; a wider one gets fewer tics.
constexpr int kMaxTicDecades = 30;

std::string terminal_lines(const GnuplotPlot& p, const char* terminal, const char* ext) {
  return fmt::format(
      "set terminal {} size {},{} font 'DejaVu Sans,11' noenhanced background '#ffffff'\n"
      "set output '{}.{}'\nload 'plots/{}.gp'\nunset output\n",
      terminal,
      p.width_px,
      p.height_px,
      p.name,
      ext,
      p.name);
}

}  // namespace

std::string write_report_file(const std::string& dir,
                              const std::string& relative,
                              const std::string& contents) {
  const fs::path path = fs::path(dir) / relative;
  fs::create_directories(path.parent_path());
  write_file_atomically(path.string(), contents);
  return relative;
}

std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out;
}

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string log_tics(double lo, double hi, std::string (*label)(double)) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo > 0.0 && hi >= lo)) {
    throw InputError(fmt::format(
        "a log-scale plot axis from {:.3g} to {:.3g} is not a finite positive range (it comes "
        "from out-of-range inputs)",
        lo,
        hi));
  }
  // Integer decades: the loop ends for any finite range (at most ~630 decades of doubles); over
  // kMaxTicDecades, only every stride-th power of ten gets a tic.
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::floor(std::log10(hi)));
  const int stride = std::max(1, (last - first + kMaxTicDecades) / kMaxTicDecades);
  std::vector<std::string> tics;
  for (int exponent = first; exponent <= last; exponent += stride) {
    const double decade = std::pow(10.0, exponent);
    for (double step : {1.0, 2.0, 5.0}) {
      if (stride > 1 && step > 1.0) break;
      const double v = decade * step;
      if (v >= lo && v <= hi) tics.push_back(fmt::format("{} {:.6g}", gnuplot_quote(label(v)), v));
    }
  }
  return fmt::format("({})", fmt::join(tics, ", "));
}

std::string series_colour(size_t index) {
  return kColours[index % std::size(kColours)];
}
int series_point_type(size_t index) {
  return kPointTypes[index % std::size(kPointTypes)];
}

std::optional<GnuplotPlot> measured_plot(const ReportData& data, const std::string& dir) {
  if (data.measurements.empty()) return std::nullopt;
  std::string rows;
  double lo = 0.0, hi = 0.0;
  for (const MeasuredRun& m : data.measurements) {
    for (double v : {m.predicted_step_time_s, m.measured_step_time_s}) {
      lo = lo == 0.0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
    rows += fmt::format("{:.6g} {:.6g} \"{} {}x{}\"\n",
                        m.predicted_step_time_s,
                        m.measured_step_time_s,
                        file_stem(m.model),
                        m.gpu_count,
                        file_stem(m.gpu));
  }
  write_report_file(dir, "data/measured.dat", "# predicted_s measured_s label\n" + rows);
  const std::string range = fmt::format("[{:.4g}:{:.4g}]", lo / 2, hi * 2);
  const std::string tics =
      log_tics(lo / 2, hi * 2, [](double v) { return fmt::format("{:g}", v); });
  GnuplotPlot p{"predicted_vs_measured", 850, 750, ""};
  p.body = fmt::format(
      "reset\nset title 'Step time: planner prediction vs benchmark measurement'\n"
      "set logscale xy\nset xrange {0}\nset yrange {0}\nset xtics {1}\nset ytics {1}\n"
      "set size square\nset grid lc rgb '#dddddd'\nset key top left box opaque\n"
      "set xlabel 'predicted step time, s (planner, log scale)'\n"
      "set ylabel 'measured step time, s (benchmark, log scale)'\n"
      "plot x with lines dt 2 lc rgb '#888888' title 'measured = predicted', \\\n"
      "  'data/measured.dat' using 1:2 with points pt 7 ps 1.4 lc rgb '#D55E00' "
      "title 'measurements', \\\n"
      "  '' using 1:2:3 with labels offset char 0,1 font ',9' notitle\n",
      range,
      tics);
  return p;
}

std::vector<std::string> draw_plots(const std::vector<GnuplotPlot>& plots,
                                    const std::string& dir,
                                    const GnuplotOptions& options) {
  std::vector<std::string> files;
  std::string master = "# Draws every plot of the report to PNG and SVG: gnuplot plots.gp\n";
  for (const GnuplotPlot& p : plots) {
    files.push_back(write_report_file(dir, "plots/" + p.name + ".gp", p.body));
    master += terminal_lines(p, "pngcairo", "png") + terminal_lines(p, "svg", "svg");
  }
  files.push_back(write_report_file(dir, "plots.gp", master));
  run_gnuplot("plots.gp", "gnuplot.log", dir, options);
  for (const GnuplotPlot& p : plots) {
    for (const char* ext : {".png", ".svg"}) {
      const fs::path image = fs::path(dir) / (p.name + ext);
      std::error_code ec;
      if (!fs::is_regular_file(image, ec) || fs::file_size(image, ec) == 0 || ec) {
        throw EnvironmentError(
            fmt::format("{} exited 0 but drew no {}{}: is --gnuplot a working gnuplot (with the "
                        "pngcairo and svg terminals)?",
                        options.executable,
                        p.name,
                        ext));
      }
      files.push_back(p.name + ext);
    }
  }
  files.push_back("gnuplot.log");
  return files;
}

}  // namespace gpudays
