// The reference benchmark's measurement rule beside gpudays' for the same cells: the issue's
// "their number, our number, same hardware, same configuration" (docs/bench.md, strategies).
#include <fmt/format.h>

#include "report/report.h"

namespace gpudays {
namespace {

std::string measured_cell(const std::optional<TrainingTime>& t) {
  if (!t) return "not measured";
  return fmt::format("{:.1f} days\n{}", t->training_days, t->settings);
}

std::string ratio_cell(const TierDetail& d) {
  if (!d.measured || !d.measured_reference || d.measured->training_days <= 0.0) return "";
  return fmt::format("{:.2f}", d.measured_reference->training_days / d.measured->training_days);
}

}  // namespace

std::optional<DocTable> measurement_rules_table(const ReportData& data) {
  DocTable table;
  table.name = "measured_rules";
  table.headers = {"model",
                   "GPUs",
                   "gpudays' rule: days (settings)",
                   "reference rule: days (settings)",
                   "reference / gpudays"};
  for (const TierDetail& d : data.details) {
    if (!d.measured_reference) continue;
    table.rows.push_back({d.model,
                          fmt::format("{} x {}", d.layout.world_size(), d.gpu),
                          measured_cell(d.measured),
                          measured_cell(d.measured_reference),
                          ratio_cell(d)});
  }
  if (table.rows.empty()) return std::nullopt;
  table.caption = fmt::format(
      "Measured, both rules on the same cells of {}: gpudays' rule is the fastest successful "
      "trial of its strategies (guided or exhaustive: every micro-batch that fits); the reference "
      "rule (bench --strategy reference) keeps each method set's largest power-of-two micro-batch "
      "that fits, timed with 1 warm-up and 3 micro-steps on gpudays' synchronised clock, and "
      "takes the fastest of those. A ratio above 1: the reference's rule picks a slower "
      "configuration than the fastest measured.",
      data.results_path);
  return table;
}

}  // namespace gpudays
