// The paper's figures its way, each added beside ours in its section of report_sections.cpp,
// titled and captioned with the paper's definition and the reference script it comes from.
#include <fmt/format.h>

#include "report/paper_figures.h"
#include "report/report.h"

namespace gpudays {
namespace {

DocFigure figure(const std::string& name, const std::string& alt, const std::string& caption) {
  return {name + ".png", name + ".svg", alt, caption};
}

}  // namespace

void add_training_flops(Document& doc, SectionContext& c) {
  doc.add(DocHeading{2, "Training FLOPs of each original recipe", "training-flops"});
  doc.add(training_flops_table(c.data));
  c.csv_files.emplace_back("training_flops.csv", training_flops_csv(c.data));
}

void add_paper_memory_blocks(Document& doc, SectionContext& c) {
  doc.add(DocHeading{3,
                     "The paper's way: optimal, median, worst and free-lunch relative to the worst",
                     "memory-paper"});
  if (const auto name = c.keep(memory_saving_bars_plot(c.data, c.dir))) {
    doc.add(figure(*name,
                   "memory-saving comparison, the paper's statistic",
                   "The paper's definition (scripts/plotting/mem_saving_methods.py): bars are the "
                   "mean over the cells with more than one GPU of the slowest memory-saving "
                   "configuration's days divided by the days of the optimal, median and worst "
                   "memory-saving configuration and of free-lunch only; error bars: 95% "
                   "interval of the mean. Predicted (planner rows). Not ours: the table above "
                   "compares each method set with the fastest configuration."));
  }
  doc.add(paper_memory_saving_table(c.data));
  c.csv_files.emplace_back("memory_saving_paper.csv", paper_memory_saving_csv(c.data));
}

void add_paper_heatmap_blocks(Document& doc, SectionContext& c) {
  doc.add(DocHeading{
      3, "The paper's way: speed-up of memory-saving methods over free-lunch", "speedup-paper"});
  if (const auto name = c.keep(free_lunch_gain_heatmap_plot(c.data, c.dir))) {
    doc.add(figure(*name,
                   "memory-saving gain over free-lunch heat-map",
                   "The paper's definition (scripts/plotting/optimal_memory_saving_speedups.py; "
                   "its 'up to 71%'): (free-lunch-only days - fastest memory-saving days) / "
                   "free-lunch-only days per model, GPU type and count; the baseline is "
                   "free-lunch, not naive as in the heat-maps above. Predicted (planner rows)."));
  }
  doc.add(DocDetailsBegin{"The gains over free-lunch as a table"});
  doc.add(free_lunch_gain_table(c.data));
  doc.add(DocDetailsEnd{});
  c.csv_files.emplace_back("memory_saving_gain.csv", free_lunch_gain_csv(c.data));
}

void add_paper_relative_speed_blocks(Document& doc, SectionContext& c) {
  doc.add(DocHeading{
      3, "The paper's way: averaged bars with 95% intervals, naive = 1", "relative-speed-paper"});
  if (const auto name = c.keep(relative_speed_bars_plot(c.data, c.dir))) {
    doc.add(figure(*name,
                   "relative training speed bars, naive = 1",
                   "The paper's definition (scripts/plotting/training_time_avg.py): naive days "
                   "divided by the days of the analytic estimate, of naive (= 1) and of the "
                   "optimal configuration, averaged over every model, GPU type and count where "
                   "all three exist; error bars: 95% interval of the mean. Predicted (planner "
                   "rows). Not ours: the table above divides the analytic days by each tier's."));
  }
  doc.add(paper_relative_speed_table(c.data));
  c.csv_files.emplace_back("relative_speed_paper.csv", paper_relative_speed_csv(c.data));
}

}  // namespace gpudays
