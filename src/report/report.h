// `gpudays report`: writes a directory with index.html (self-contained: inline style, images next
// to it, no network), report.md (the same content in Markdown), every plot as PNG and SVG, the
// gnuplot scripts and data files that drew them, and CSV files of every number shown.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/gnuplot.h"
#include "report/plots.h"
#include "report/report_data.h"
#include "report/report_doc.h"
#include "report/report_tables_paper.h"

namespace gpudays {

struct ReportOutputOptions {
  std::string out_dir;
  GnuplotOptions gnuplot;
  std::string generated_by;  // "gpudays 0.1.0 (abc1234)"
  std::string generated_at;  // ISO date
  std::string config_dir;    // the catalog the numbers came from
  bool replace = false;      // replace a non-empty out_dir (else refuse it)
  DaysRounding days_rounding = DaysRounding::kTenths;  // the training-days tables
};

// Returns the files written, relative to out_dir: besides the pages, plots and CSV files, every
// table of the page as NAME.tex (report_latex.h). Writes all or nothing: out_dir is replaced only
// when every file was written; on any failure, and on SIGINT/SIGTERM (Interrupted), the staging
// directory is removed and out_dir left as it was. Throws InputError when out_dir is not empty
// (without `replace`), EnvironmentError when gnuplot is missing or fails or a write fails.
std::vector<std::string> generate_report(const ReportData& data,
                                         const ReportOutputOptions& options);

// The summary's lines: the paper's title, "$100K or 100 Days".
inline constexpr double kSummaryMaxDays = 100.0;
inline constexpr double kSummaryBudgetUsd = 100000.0;

// Of one model's cost rows within both lines (indices into analysis.rows): the fastest, and the
// cheapest to buy (ties: the faster).
struct SummaryRow {
  std::optional<size_t> fastest;
  std::optional<size_t> cheapest;
};
SummaryRow summarise(const CostAnalysis& analysis);
DocTable summary_table(const ReportData& data);  // report_summary.cpp

// The report's sections in page order (report_sections.cpp). Each adds its headings, text,
// tables and figures to `doc`, its plots to `plots` (drawn in one gnuplot run) and its CSV files
// to `files` (name, contents). A new section is one function and one entry of the list.
struct SectionContext {
  const ReportData& data;
  const std::string& dir;  // plot data files go under dir/data
  std::vector<GnuplotPlot>& plots;
  std::vector<std::pair<std::string, std::string>>& csv_files;
  DaysRounding days_rounding = DaysRounding::kTenths;
  // Keeps the plot (when there is one) and returns its name.
  std::optional<std::string> keep(std::optional<GnuplotPlot> plot);
};
using ReportSection = void (*)(Document& doc, SectionContext& context);
struct NamedSection {
  const char* name;
  ReportSection add;
};
const std::vector<NamedSection>& report_sections();

// Blocks of two sections (report.cpp): one model's cost plots (purchase, and the paper's
// amortised) and table, and the measured trials.
void add_model_cost_blocks(Document& doc, SectionContext& context, size_t model_index);
void add_measured_blocks(Document& doc, SectionContext& context);

// The paper's figures its way, each beside ours in its section (report_sections_paper.cpp;
// definitions in paper_figures.h): the training FLOPs table, the memory-saving statistic, the
// heat-map against free-lunch and the relative-speed bars.
void add_training_flops(Document& doc, SectionContext& context);
void add_paper_memory_blocks(Document& doc, SectionContext& context);
void add_paper_heatmap_blocks(Document& doc, SectionContext& context);
void add_paper_relative_speed_blocks(Document& doc, SectionContext& context);

// Every DocTable of `doc` as NAME.tex in `dir`; returns the files (relative to dir). Throws
// std::logic_error on a table without a name or two tables with one name.
std::vector<std::string> write_latex_tables(const Document& doc, const std::string& dir);

// Tables of the report (report_tables.cpp); each caption names its sources.
DocTable cost_table(const ReportData& data, size_t model_index);
DocTable feasibility_table(const ReportData& data);
DocTable gpu_days_table(const ReportData& data);
DocTable speedup_table(const ReportData& data);
// Each cell measured under both rules (gpudays' fastest trial, the reference's pick), side by
// side; none when no cell has a reference-rule measurement.
std::optional<DocTable> measurement_rules_table(const ReportData& data);
DocList sources_list(const ReportData& data);
std::string cost_rows_csv(const ReportData& data);
std::string tier_rows_csv(const ReportData& data);

}  // namespace gpudays
