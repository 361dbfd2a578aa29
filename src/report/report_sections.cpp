// The report's sections in page order: the summary, the contents, the paper's tables and figures,
// predicted vs measured, the per-model detail (collapsed) and the sources. Each section is one
// function; report_sections() lists them.
#include <fmt/format.h>

#include "cost/cost_format.h"
#include "report/paper_section.h"
#include "report/report.h"
#include "report/report_tables_paper.h"

namespace gpudays {
namespace {

constexpr const char* kOursThenThePapers =
    "Two definitions of the same question: gpudays' first, then the paper's (\"$100K or 100 "
    "Days\", computed as its plotting scripts compute it), each titled with the one it uses.";

DocFigure figure(const std::string& name, const std::string& alt, const std::string& caption) {
  return {name + ".png", name + ".svg", alt, caption};
}

void add_summary(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2,
                     fmt::format("Summary: what trains in {:g} days for {}",
                                 kSummaryMaxDays,
                                 format_usd(kSummaryBudgetUsd)),
                     "summary"});
  doc.add(summary_table(c.data));
}

void add_contents(Document& doc, SectionContext&) {
  doc.add(DocToc{});
}

void add_training_days(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Training days with optimal settings", "optimal-days"});
  doc.add(training_days_table(c.data, DaysTable::kOptimal, c.days_rounding));
  doc.add(DocHeading{2, "Training days with naive settings", "naive-days"});
  doc.add(training_days_table(c.data, DaysTable::kNaive, c.days_rounding));
  doc.add(DocHeading{2, "Optimal settings per cell", "optimal-settings"});
  doc.add(DocDetailsBegin{"The settings of every cell of the optimal-days table"});
  doc.add(optimal_settings_table(c.data));
  doc.add(DocDetailsEnd{});
  c.csv_files.emplace_back("training_days.csv", training_days_csv(c.data));
}

void add_memory_methods(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Memory-saving methods: which each model needs, and their cost", "memory"});
  doc.add(DocParagraph{kOursThenThePapers});
  doc.add(memory_methods_table(c.data));
  c.csv_files.emplace_back("memory_methods.csv", memory_methods_csv(c.data));
  add_paper_memory_blocks(doc, c);
}

void add_speedup(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Speed-up of free-lunch and memory-saving methods over naive", "speedup"});
  doc.add(DocParagraph{kOursThenThePapers});
  if (const auto name = c.keep(speedup_heatmap_plot(c.data, c.dir))) {
    doc.add(figure(*name,
                   "speed-up heat-maps",
                   "gpudays' definition (baseline: naive). Predicted speed-up (x, naive days / "
                   "tier days; planner best rows of each "
                   "preset) per model, GPU type and count. Grey: 'no naive' where naive does not "
                   "fit (no baseline), 'none fits' where the tier does not fit."));
  }
  if (const auto name = c.keep(speedup_plot(c.data, c.dir))) {
    doc.add(figure(*name,
                   "speed-up over naive",
                   fmt::format("gpudays' definition (baseline: naive). Predicted speed-up (x) "
                               "on {} GPUs of the fastest free-lunch and "
                               "all configurations over naive (planner best rows of each preset). "
                               "Cross: naive does not fit, so there is no baseline.",
                               c.data.detail_gpu_count)));
  }
  doc.add(DocDetailsBegin{"The speed-ups as a table"});
  doc.add(speedup_table(c.data));
  doc.add(DocDetailsEnd{});
  add_paper_heatmap_blocks(doc, c);
}

void add_relative_speed(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Relative training speed per method tier", "relative-speed"});
  doc.add(DocParagraph{kOursThenThePapers});
  doc.add(relative_speed_table(c.data));
  c.csv_files.emplace_back("relative_speed.csv", relative_speed_csv(c.data));
  add_paper_relative_speed_blocks(doc, c);
}

void add_experiment_cost(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Experiment cost: amortised and cloud", "experiment-cost"});
  doc.add(
      DocParagraph{"What one pre-training run costs beyond buying the hardware: its share of "
                   "the hardware over the amortisation period, or renting the GPUs."});
  doc.add(DocDetailsBegin{"Amortised and cloud cost of every option"});
  doc.add(experiment_cost_table(c.data));
  doc.add(DocDetailsEnd{});
  c.csv_files.emplace_back("costs.csv", cost_rows_csv(c.data));
}

void add_paper(Document& doc, SectionContext& c) {
  add_paper_section(doc, c.data.paper);
}

void add_feasibility(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Feasibility: which method tier fits", "feasibility"});
  if (const auto name = c.keep(feasibility_plot(c.data, c.dir))) {
    doc.add(figure(
        *name,
        "feasibility grid",
        "Predicted (planner rows). One panel per GPU count. Colour: the lightest method preset "
        "with a configuration that fits; label: training days of the fastest "
        "configuration of preset all."));
  }
  doc.add(feasibility_table(c.data));
  c.csv_files.emplace_back("tiers.csv", tier_rows_csv(c.data));
}

void add_gpu_days(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "GPU-days vs the originally reported run", "gpu-days"});
  if (const auto name = c.keep(gpu_days_plot(c.data, c.dir))) {
    doc.add(figure(
        *name,
        "GPU-days relative to the reported run",
        "Predicted. Bars: planned GPU-days (planner best row, preset all) divided by the GPU-days "
        "of the run the model's authors reported (model catalog, [reported]), log scale; below 1 "
        "means fewer GPU-days than the original. n/f: infeasible (does not fit or cannot run)."));
    doc.add(gpu_days_table(c.data));
  } else {
    doc.add(DocParagraph{"None of the selected models has a reported run on GPUs in the catalog."});
  }
  for (const ModelSpec* m : c.data.models) {
    if (!m->reported || m->reported->on_gpus()) continue;
    doc.add(DocParagraph{fmt::format(
        "{}: the reported run used {} {} for {:g} days, not GPUs, so it has no GPU-days to "
        "compare with ({}).",
        m->name,
        m->reported->gpus,
        m->reported->accelerator,
        m->reported->days,
        m->reported->source)});
  }
}

void add_measured(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Predicted vs measured", "measured"});
  add_measured_blocks(doc, c);
}

void add_per_model(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Per-model detail: cost vs training days", "per-model"});
  doc.add(DocParagraph{
      "For each model, every hardware option (GPU type x count): how long pre-training with the "
      "original recipe takes with the planner's fastest configuration, and what buying the "
      "hardware costs. Options on the dashed Pareto frontier are not beaten on both time and "
      "cost by any other option. Open a model to see its plot and table."});
  for (size_t i = 0; i < c.data.models.size(); ++i) {
    doc.add(DocDetailsBegin{c.data.models[i]->name});
    add_model_cost_blocks(doc, c, i);
    doc.add(DocDetailsEnd{});
  }
}

void add_sources(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Sources and assumptions", "sources"});
  doc.add(sources_list(c.data));
}

}  // namespace

std::optional<std::string> SectionContext::keep(std::optional<GnuplotPlot> plot) {
  if (!plot) return std::nullopt;
  plots.push_back(std::move(*plot));
  return plots.back().name;
}

const std::vector<NamedSection>& report_sections() {
  static const std::vector<NamedSection> sections = {
      {"summary", add_summary},
      {"contents", add_contents},
      {"training-days", add_training_days},
      {"training-flops", add_training_flops},
      {"memory-methods", add_memory_methods},
      {"speedup", add_speedup},
      {"relative-speed", add_relative_speed},
      {"experiment-cost", add_experiment_cost},
      {"paper", add_paper},
      {"feasibility", add_feasibility},
      {"gpu-days", add_gpu_days},
      {"measured", add_measured},
      {"per-model", add_per_model},
      {"sources", add_sources},
  };
  return sections;
}

}  // namespace gpudays
