// Report assembly: data files, plots (one gnuplot run), then the same Document rendered to
// index.html and report.md.
#include "report/report.h"

#include <filesystem>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output_files.h"
#include "report/paper_section.h"
#include "report/plots.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

struct PlannedPlots {
  std::vector<GnuplotPlot> plots;
  std::vector<std::optional<std::string>> cost;  // per model: plot name, or none
  std::optional<std::string> feasibility, gpu_days, speedup, measured;
};

std::optional<std::string> keep(std::optional<GnuplotPlot> plot, PlannedPlots& planned) {
  if (!plot) return std::nullopt;
  planned.plots.push_back(std::move(*plot));
  return planned.plots.back().name;
}

PlannedPlots plan_plots(const ReportData& data, const std::string& dir) {
  PlannedPlots p;
  for (size_t i = 0; i < data.models.size(); ++i)
    p.cost.push_back(keep(cost_vs_days_plot(data, i, dir), p));
  p.feasibility = keep(feasibility_plot(data, dir), p);
  p.gpu_days = keep(gpu_days_plot(data, dir), p);
  p.speedup = keep(speedup_plot(data, dir), p);
  p.measured = keep(measured_plot(data, dir), p);
  return p;
}

DocFigure figure(const std::string& name, const std::string& alt, const std::string& caption) {
  return {name + ".png", name + ".svg", alt, caption};
}

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

void add_cost_section(Document& doc, const ReportData& data, const PlannedPlots& plots) {
  doc.add(DocHeading{2, "Cost vs training days", "cost"});
  doc.add(DocParagraph{
      "For each model, every hardware option (GPU type x count): how long pre-training with the "
      "original recipe takes with the planner's fastest configuration, and what buying the "
      "hardware costs. Options on the dashed Pareto frontier are not beaten on both time and "
      "cost by any other option."});
  for (size_t i = 0; i < data.models.size(); ++i) {
    doc.add(DocHeading{3, data.models[i]->name, ""});
    if (plots.cost[i]) {
      doc.add(figure(*plots.cost[i],
                     data.models[i]->name + " cost vs days",
                     fmt::format("{}: purchase cost vs training days. Days: {}; prices: the "
                                 "GPU catalog and {}. {}",
                                 data.models[i]->name,
                                 data.cost_time_source,
                                 data.cost.assumptions.source_path,
                                 no_fit_note(data.costs[i]))));
    } else {
      doc.add(DocParagraph{"No plot: no hardware option can run this model (see the table)."});
    }
    doc.add(cost_table(data, i));
  }
}

void add_tier_sections(Document& doc, const ReportData& data, const PlannedPlots& plots) {
  doc.add(DocHeading{2, "Feasibility: which method tier fits", "feasibility"});
  if (plots.feasibility) {
    doc.add(figure(*plots.feasibility,
                   "feasibility grid",
                   fmt::format("Colour: the lightest method preset with a configuration that fits "
                               "on {} GPUs (planner rows); label: training days of the fastest "
                               "configuration of preset all.",
                               data.detail_gpu_count)));
  }
  doc.add(feasibility_table(data));
  doc.add(DocHeading{2, "GPU-days vs the originally reported run", "gpu-days"});
  if (plots.gpu_days) {
    doc.add(figure(
        *plots.gpu_days,
        "GPU-days relative to the reported run",
        "Bars: planned GPU-days (planner best row, preset all) divided by the GPU-days "
        "of the run the model's authors reported (model catalog, [reported]); below 1 "
        "means fewer GPU-days than the original. n/f: infeasible (does not fit or cannot run)."));
    doc.add(gpu_days_table(data));
  } else {
    doc.add(DocParagraph{"None of the selected models has a reported run in the catalog."});
  }
  doc.add(DocHeading{2, "Speed-up of each method tier over naive", "speedup"});
  if (plots.speedup) {
    doc.add(figure(*plots.speedup,
                   "speed-up over naive",
                   "Naive training days divided by the training days of the fastest free-lunch "
                   "and all configurations (planner best rows of each preset). Red cross: naive is "
                   "infeasible, so there is no baseline."));
  }
  doc.add(speedup_table(data));
}

void add_measured_section(Document& doc, const ReportData& data, const PlannedPlots& plots) {
  doc.add(DocHeading{2, "Predicted vs measured", "measured"});
  if (!plots.measured) {
    doc.add(DocParagraph{
        "No measurements yet: every number in this report is a planner prediction. Benchmark "
        "results will appear here, next to the prediction for the same hardware and settings."});
    return;
  }
  doc.add(figure(*plots.measured,
                 "predicted vs measured step time",
                 "Each point: a benchmark result row (measured step time) against the planner's "
                 "prediction for the same model, hardware and settings."));
  DocTable table;
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
}

Document build_document(const ReportData& data,
                        const PlannedPlots& plots,
                        const ReportOutputOptions& options) {
  Document doc;
  doc.title = "gpudays report: pre-training cost and time on academic GPUs";
  doc.add(DocParagraph{
      fmt::format("Generated {} by {} from the catalog in {}. Training times: {}; analytic, no "
                  "measurements. Cost assumptions: {}. Every table names its sources; raw numbers "
                  "are in costs.csv and "
                  "tiers.csv, plot data under data/ and plot scripts under plots/.",
                  options.generated_at,
                  options.generated_by,
                  options.config_dir,
                  data.cost_time_source,
                  data.cost.assumptions.source_path)});
  doc.add(DocList{{"Cost vs training days (per model)",
                   "Feasibility grid",
                   "GPU-days vs the originally reported run",
                   "Speed-up over naive",
                   "Predicted vs measured",
                   "The paper's numbers beside ours",
                   "Sources and assumptions"}});
  add_cost_section(doc, data, plots);
  add_tier_sections(doc, data, plots);
  add_measured_section(doc, data, plots);
  add_paper_section(doc, data.paper);
  doc.add(DocHeading{2, "Sources and assumptions", "sources"});
  doc.add(sources_list(data));
  return doc;
}

}  // namespace

std::vector<std::string> generate_report(const ReportData& data,
                                         const ReportOutputOptions& options) {
  require_gnuplot(options.gnuplot);
  // Everything is written into a staging directory that replaces out_dir only when complete, so
  // a failed plot leaves the previous report as it was.
  StagedDirectory staged(options.out_dir, options.replace);
  const std::string& dir = staged.path();
  std::vector<std::string> files;
  files.push_back(write_report_file(dir, "costs.csv", cost_rows_csv(data)));
  files.push_back(write_report_file(dir, "tiers.csv", tier_rows_csv(data)));
  const PlannedPlots plots = plan_plots(data, dir);
  for (std::string& f : draw_plots(plots.plots, dir, options.gnuplot))
    files.push_back(std::move(f));
  Document doc = build_document(data, plots, options);
  files.push_back(write_report_file(dir, "report.md", render_markdown(doc)));
  embed_figures(doc, dir);
  files.push_back(write_report_file(dir, "index.html", render_html(doc)));
  staged.commit();
  return files;
}

}  // namespace gpudays
