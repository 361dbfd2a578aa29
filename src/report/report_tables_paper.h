// The paper's tables from our data ("$100K or 100 Days", Khandelwal et al. 2024): training days
// with optimal and naive settings, the optimal settings, the memory-saving methods, relative
// training speed against the analytic FLOPs / peak estimate, amortised and cloud cost. Each as a
// DocTable and as CSV; every cell says whether it is predicted (with the planner's range) or
// measured (with the trial's provenance).
#pragma once

#include <string>

#include "report/report_data.h"
#include "report/report_doc.h"

namespace gpudays {

enum class DaysTable { kOptimal, kNaive };

// How the days tables print days: to a tenth (ours), or to whole days as the paper prints its
// tables (paper_statistics.h, whole_days; `report --whole-days`). CSV files keep every digit.
enum class DaysRounding { kTenths, kWholeDays };

// Model rows x (GPU type x count) columns; "—" where nothing fits. kOptimal shows the fastest
// measured trial instead of the prediction where the database has one, marked "measured".
DocTable training_days_table(const ReportData& data,
                             DaysTable which,
                             DaysRounding rounding = DaysRounding::kTenths);
DocTable optimal_settings_table(const ReportData& data);
DocTable memory_methods_table(const ReportData& data);
DocTable relative_speed_table(const ReportData& data);
DocTable experiment_cost_table(const ReportData& data);

// One row per model x GPU x count and source; the columns name the source of each number.
std::string training_days_csv(const ReportData& data);
std::string memory_methods_csv(const ReportData& data);
std::string relative_speed_csv(const ReportData& data);

// "12.3 (9.8-14.1)" predicted with the planner's range ("12 (10-14)" in whole days); "—" when
// it cannot run.
std::string predicted_days_cell(const TrainingTime& t,
                                DaysRounding rounding = DaysRounding::kTenths);
std::string days_text(double days, DaysRounding rounding);  // "12.3" or "12"

// Relative training speed of a tier: the analytic estimate's days (recipe model FLOPs / (GPUs x
// peak dense FLOP/s of its dtype), the paper's estimate) divided by the tier's days.
double analytic_days(const TierDetail& detail);  // 0 when preset all does not fit

// A CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

inline constexpr const char* kNothingFits = "\u2014";  // the paper's "—"

}  // namespace gpudays
