// The reference paper's figures computed its way from the report's planner rows, beside ours
// (report_tables_paper.h): the memory-saving comparison relative to the slowest configuration,
// the gain of memory-saving over free-lunch (its heat-maps), relative training speed as averaged
// bars with naive = 1, and the training FLOPs of each original recipe. Sources: "$100K or 100
// Days" (Khandelwal et al. 2024) and its scripts/plotting/ in apoorvkh/academic-pretraining.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/paper_statistics.h"
#include "report/report_data.h"
#include "report/report_doc.h"

namespace gpudays {

// The days of the free-lunch-only method set (free-lunch on, nothing else) of a cell; nullopt
// when it does not fit or was not searched.
std::optional<double> free_lunch_only_days(const MethodComparison& m);
// The days of every free-lunch method set with a memory-saving method on that fits.
std::vector<double> memory_saving_days(const MethodComparison& m);

// The paper's comparison of memory-saving methods (mem_saving_methods.py): per cell with more
// than one GPU where a memory-saving configuration fits, the speed-ups over the slowest one;
// each bar the mean over those cells with its 95% interval (free-lunch: the cells where it fits).
struct MemorySavingBars {
  std::optional<MeanInterval> optimal, median, worst, free_lunch;
};
MemorySavingBars memory_saving_bars(const ReportData& data);

// The paper's relative training speed (training_time_avg.py): per cell where the analytic
// estimate, naive and optimal (preset all) all exist, speed relative to naive (naive days / days);
// each bar the mean over those cells with its 95% interval. Naive is 1 by construction.
struct RelativeSpeedBars {
  std::optional<MeanInterval> analytic, naive, optimal;
};
RelativeSpeedBars relative_speed_bars(const ReportData& data);

// The paper's heat-map cell (optimal_memory_saving_speedups.py): the fastest memory-saving
// configuration's gain over free-lunch-only; nullopt when either does not fit.
std::optional<double> free_lunch_gain(const MethodComparison& m);

// Tables and CSV files (paper_figures_tables.cpp); each caption names the paper's definition.
DocTable paper_memory_saving_table(const ReportData& data);
DocTable paper_relative_speed_table(const ReportData& data);
DocTable free_lunch_gain_table(const ReportData& data);
DocTable training_flops_table(const ReportData& data);
std::string paper_memory_saving_csv(const ReportData& data);
std::string paper_relative_speed_csv(const ReportData& data);
std::string free_lunch_gain_csv(const ReportData& data);
std::string training_flops_csv(const ReportData& data);

// "23%" / "-5%": a gain as the paper's heat-maps print it (Vega format ".0%").
std::string percent_text(double fraction);

}  // namespace gpudays
