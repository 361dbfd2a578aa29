// `gpudays report`: writes a directory with index.html (self-contained: inline style, images next
// to it, no network), report.md (the same content in Markdown), every plot as PNG and SVG, the
// gnuplot scripts and data files that drew them, and CSV files of every number shown.
#pragma once

#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/report_data.h"
#include "report/report_doc.h"

namespace gpudays {

struct ReportOutputOptions {
  std::string out_dir;
  GnuplotOptions gnuplot;
  std::string generated_by;  // "gpudays 0.1.0 (abc1234)"
  std::string generated_at;  // ISO date
  std::string config_dir;    // the catalog the numbers came from
  bool replace = false;      // replace a non-empty out_dir (else refuse it)
};

// Returns the files written, relative to out_dir. Writes all or nothing: out_dir is replaced only
// when every file was written. Throws InputError when out_dir is not empty (without `replace`),
// EnvironmentError when gnuplot is missing or fails or a write fails.
std::vector<std::string> generate_report(const ReportData& data,
                                         const ReportOutputOptions& options);

// Tables of the report (report_tables.cpp); each caption names its sources.
DocTable cost_table(const ReportData& data, size_t model_index);
DocTable feasibility_table(const ReportData& data);
DocTable gpu_days_table(const ReportData& data);
DocTable speedup_table(const ReportData& data);
DocList sources_list(const ReportData& data);
std::string cost_rows_csv(const ReportData& data);
std::string tier_rows_csv(const ReportData& data);

}  // namespace gpudays
