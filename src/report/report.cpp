// Report assembly: every section of report_sections() adds its blocks, plots and CSV files; the
// plots are drawn in one gnuplot run; the same Document is rendered to index.html and report.md.
#include "report/report.h"

#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/output_files.h"
#include "report/plots.h"
#include "report/report_latex.h"

namespace gpudays {
namespace {

std::string no_fit_note(const CostAnalysis& analysis) {
  std::string missing;
  for (const CostRow& r : analysis.rows) {
    if (!r.time.fits)
      missing +=
          fmt::format("{}{} x {}", missing.empty() ? "" : ", ", r.layout.world_size(), r.gpu);
  }
  return missing.empty() ? "Every option fits."
                         : "Not drawn (cannot run; see the table): " + missing + ".";
}

// Why a model's cost plot is missing: nothing runs, or every option is free (a log scale has no 0).
std::string no_plot_note(const CostAnalysis& analysis) {
  for (const CostRow& r : analysis.rows) {
    if (r.time.fits) {
      return "No plot: every option that runs costs $0, which a log scale cannot show (see the "
             "table).";
    }
  }
  return "No plot: no hardware option can run this model (see the table).";
}

std::string intro(const ReportData& data, const ReportOutputOptions& options) {
  const std::string measured =
      data.results_path.empty()
          ? "no results database, so every number is a planner prediction"
          : fmt::format("measured cells come from the results database {} and are marked",
                        data.results_path);
  return fmt::format(
      "Generated {} by {} from the catalog in {}. Training times: {}; {}. Cost assumptions: {}. "
      "Every table and plot says whether its numbers are predicted or measured and names its "
      "sources; the numbers are in the CSV files next to this page (training_days.csv, "
      "training_flops.csv, memory_methods.csv, memory_saving_paper.csv, memory_saving_gain.csv, "
      "relative_speed.csv, relative_speed_paper.csv, costs.csv, tiers.csv), every table also as "
      "LaTeX (NAME.tex, linked from its caption), plot data under data/ and plot scripts "
      "under plots/.",
      options.generated_at,
      options.generated_by,
      options.config_dir,
      data.cost_time_source,
      measured,
      data.cost.assumptions.source_path);
}

}  // namespace

void add_model_cost_blocks(Document& doc, SectionContext& c, size_t i) {
  const ReportData& data = c.data;
  if (const auto name = c.keep(cost_vs_days_plot(data, i, c.dir))) {
    doc.add(DocFigure{*name + ".png",
                      *name + ".svg",
                      data.models[i]->name + " cost vs days",
                      fmt::format("{}: purchase cost (USD, log scale) vs training days (log "
                                  "scale), predicted. Days: {}; prices: the GPU catalog and {}. {}",
                                  data.models[i]->name,
                                  data.cost_time_source,
                                  data.cost.assumptions.source_path,
                                  no_fit_note(data.costs[i]))});
  } else {
    doc.add(DocParagraph{no_plot_note(data.costs[i])});
  }
  if (const auto name = c.keep(cost_vs_days_plot(data, i, c.dir, CostAxis::kAmortised))) {
    doc.add(DocFigure{
        *name + ".png",
        *name + ".svg",
        data.models[i]->name + " amortised cost vs days",
        fmt::format("{}: the paper's experiment cost (scripts/plotting/training_costs.py, "
                    "normalized_cost): purchase x days / ({:g} x 365), USD, log scale, vs "
                    "training days (log scale), predicted; the dashed staircase: options no "
                    "faster option undercuts.",
                    data.models[i]->name,
                    data.cost.assumptions.amortisation.years)});
  }
  doc.add(cost_table(data, i));
}

std::vector<std::string> write_latex_tables(const Document& doc, const std::string& dir) {
  std::vector<std::string> files;
  std::set<std::string> names;
  for (const DocBlock& block : doc.blocks) {
    const DocTable* table = std::get_if<DocTable>(&block);
    if (table == nullptr) continue;
    if (table->name.empty() || !names.insert(table->name).second) {
      throw std::logic_error("report table without a distinct name: '" + table->name + "'");
    }
    files.push_back(write_report_file(dir, table->name + ".tex", render_latex(*table)));
  }
  return files;
}

void add_measured_blocks(Document& doc, SectionContext& c) {
  const ReportData& data = c.data;
  for (const std::string& note : data.measurements_left_out) {
    doc.add(DocParagraph{"Left out: " + note});
  }
  const auto name = c.keep(measured_plot(data, c.dir));
  if (!name) {
    doc.add(DocParagraph{
        "No measurements yet: every number in this report is a planner prediction. Benchmark "
        "results will appear here, next to the prediction for the same hardware and settings."});
    return;
  }
  doc.add(DocFigure{*name + ".png",
                    *name + ".svg",
                    "predicted vs measured step time",
                    "Measured. Each point: a benchmark result row (measured step time, s) against "
                    "the planner's prediction recorded with it for the same model, hardware and "
                    "settings (s); both log scales."});
  DocTable table;
  table.name = "measured";
  table.headers = {"model", "GPUs", "predicted step (s)", "measured step (s)", "ratio", "source"};
  for (const MeasuredRun& m : data.measurements) {
    table.rows.push_back({m.model,
                          fmt::format("{} x {}", m.gpu_count, m.gpu),
                          fmt::format("{:.3f}", m.predicted_step_time_s),
                          fmt::format("{:.3f}", m.measured_step_time_s),
                          fmt::format("{:.2f}", m.measured_step_time_s / m.predicted_step_time_s),
                          m.source});
  }
  table.caption =
      "Measured / predicted step time of each benchmark row, with the row it came from.";
  doc.add(std::move(table));
  if (std::optional<DocTable> rules = measurement_rules_table(data)) {
    doc.add(DocHeading{3, "The reference benchmark's rule beside gpudays'", "measured-rules"});
    doc.add(std::move(*rules));
  }
}

std::vector<std::string> generate_report(const ReportData& data,
                                         const ReportOutputOptions& options) {
  require_gnuplot(options.gnuplot);
  // SIGINT/SIGTERM stop the work by an exception (Interrupted), so that the staging directory is
  // removed as on any other failure; declared first, it outlives the staging directory.
  const InterruptScope interrupt_scope;
  // Everything is written into a staging directory that replaces out_dir only when complete, so
  // a failed plot leaves the previous report as it was.
  StagedDirectory staged(options.out_dir, options.replace);
  const std::string& dir = staged.path();
  Document doc;
  doc.title = "gpudays report: pre-training cost and time on academic GPUs";
  doc.add(DocParagraph{intro(data, options)});
  std::vector<GnuplotPlot> plots;
  std::vector<std::pair<std::string, std::string>> csv_files;
  SectionContext context{data, dir, plots, csv_files, options.days_rounding};
  for (const NamedSection& section : report_sections()) {
    section.add(doc, context);
    throw_if_interrupted();
  }
  std::vector<std::string> files;
  for (const auto& [name, contents] : csv_files)
    files.push_back(write_report_file(dir, name, contents));
  for (std::string& f : write_latex_tables(doc, dir)) files.push_back(std::move(f));
  for (std::string& f : draw_plots(plots, dir, options.gnuplot)) files.push_back(std::move(f));
  files.push_back(write_report_file(dir, "report.md", render_markdown(doc)));
  embed_figures(doc, dir);
  files.push_back(write_report_file(dir, "index.html", render_html(doc)));
  staged.commit();
  return files;
}

}  // namespace gpudays
