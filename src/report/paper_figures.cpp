// The paper's statistics over the report's cells: which cells each figure averages, and the
// values of each cell (paper_statistics.h does the arithmetic).
#include "report/paper_figures.h"

#include <cmath>

#include <fmt/format.h>

#include "report/report_tables_paper.h"

namespace gpudays {
namespace {

constexpr size_t kNaive = 0;
constexpr size_t kAll = kReportTierCount - 1;

// Speeds of the cells of one bar, for mean_ci95.
struct Samples {
  std::vector<double> a, b, c, d;
};

}  // namespace

std::optional<double> free_lunch_only_days(const MethodComparison& m) {
  for (const MethodSetDays& s : m.method_sets) {
    if (s.methods.free_lunch && !is_memory_saving(s.methods)) return s.days;
  }
  return std::nullopt;
}

std::vector<double> memory_saving_days(const MethodComparison& m) {
  std::vector<double> days;
  for (const MethodSetDays& s : m.method_sets) {
    if (s.methods.free_lunch && is_memory_saving(s.methods) && s.days) days.push_back(*s.days);
  }
  return days;
}

MemorySavingBars memory_saving_bars(const ReportData& data) {
  Samples s;
  for (const TierDetail& d : data.details) {
    if (d.layout.world_size() <= 1) continue;  // the paper's `gpus_per_node > 1`
    const auto speedups =
        memory_saving_speedups(memory_saving_days(d.methods), free_lunch_only_days(d.methods));
    if (!speedups) continue;
    s.a.push_back(speedups->optimal);
    s.b.push_back(speedups->median);
    s.c.push_back(speedups->worst);
    if (speedups->free_lunch) s.d.push_back(*speedups->free_lunch);
  }
  return {mean_ci95(s.a), mean_ci95(s.b), mean_ci95(s.c), mean_ci95(s.d)};
}

RelativeSpeedBars relative_speed_bars(const ReportData& data) {
  Samples s;
  for (const TierDetail& d : data.details) {
    const double analytic = analytic_days(d);
    const TrainingTime& naive = d.tiers[kNaive];
    const TrainingTime& optimal = d.tiers[kAll];
    if (analytic <= 0.0 || !naive.fits || !optimal.fits) continue;
    s.a.push_back(naive.training_days / analytic);
    s.b.push_back(naive.training_days / naive.training_days);
    s.c.push_back(naive.training_days / optimal.training_days);
  }
  return {mean_ci95(s.a), mean_ci95(s.b), mean_ci95(s.c)};
}

std::optional<double> free_lunch_gain(const MethodComparison& m) {
  const std::optional<double> free_lunch = free_lunch_only_days(m);
  const std::vector<double> memory_saving = memory_saving_days(m);
  if (!free_lunch || memory_saving.empty()) return std::nullopt;
  double fastest = memory_saving.front();
  for (double days : memory_saving) fastest = std::min(fastest, days);
  return memory_saving_gain(*free_lunch, fastest);
}

std::string percent_text(double fraction) {
  const double percent = std::round(fraction * 100.0);
  return fmt::format("{:.0f}%", percent == 0.0 ? 0.0 : percent);  // never "-0%"
}

}  // namespace gpudays
