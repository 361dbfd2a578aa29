// The peak-memory check as text and JSON.
#include "rows/memory_check_rows.h"

#include <fmt/format.h>

#include "rows/table.h"

namespace gpudays {
namespace {

// "3.7-4.9", with a star when the published peak is outside; "-" for a figure without slack.
std::string range_cell(const MemoryComparison& c) {
  if (!c.predicted_low_gib) return "-";
  return fmt::format(
      "{:.1f}-{:.1f}{}", *c.predicted_low_gib, *c.predicted_high_gib, c.inside_range() ? "" : " *");
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

void print_memory_check(std::ostream& out, const ValidationReport& report) {
  const MemoryCheckReport& m = report.memory;
  if (m.comparisons.empty()) return;
  out << "\nPeak memory per GPU against the published peaks (error = predicted / published - 1; "
         "positive: the planner asks for more; measure: what the published figure counts, the "
         "process as nvidia-smi shows it, the allocator's reservation or its allocation):\n";
  Table table({"case", "measure", "published GiB", "predicted GiB", "range GiB", "error", "fits"});
  for (const MemoryComparison& c : m.comparisons) {
    const ValidationCase& v = report.cases[c.case_index];
    table.add_row({v.source_id + "/" + v.name,
                   c.measure,
                   fmt::format("{:.1f}", c.published_gib),
                   fmt::format("{:.1f}", c.predicted_gib),
                   range_cell(c),
                   fmt::format("{:+.1f}%", 100.0 * c.error),
                   v.row && v.row->fits ? "yes" : "no"});
  }
  table.print(out);
  out << fmt::format(
      "memory: {} cases, MAPE {:.1f}%, mean {:+.1f}%, max |error| {:.1f}%, {} within 10%; "
      "{} of {} inside their range (the allocator's slack from its floor to the high end of "
      "public runs', * outside)\n",
      m.comparisons.size(),
      100.0 * m.mape,
      100.0 * m.mean_error,
      100.0 * m.max_abs_error,
      m.within_10_percent,
      m.inside_range,
      m.with_range);
}

nlohmann::json memory_check_json(const ValidationReport& report) {
  const MemoryCheckReport& m = report.memory;
  nlohmann::json cases = nlohmann::json::array();
  for (const MemoryComparison& c : m.comparisons) {
    const ValidationCase& v = report.cases[c.case_index];
    cases.push_back(
        {{"case", v.source_id + "/" + v.name},
         {"measure", c.measure},
         {"published_gib", c.published_gib},
         {"predicted_gib", c.predicted_gib},
         {"predicted_low_gib", optional_json(c.predicted_low_gib)},
         {"predicted_high_gib", optional_json(c.predicted_high_gib)},
         {"inside_range", c.predicted_low_gib ? nlohmann::json(c.inside_range()) : nullptr},
         {"error", c.error},
         {"fits", v.row && v.row->fits}});
  }
  return {{"cases", cases},
          {"count", m.comparisons.size()},
          {"mape", m.mape},
          {"mean_error", m.mean_error},
          {"max_abs_error", m.max_abs_error},
          {"within_10_percent", m.within_10_percent},
          {"with_range_count", m.with_range},
          {"inside_range_count", m.inside_range}};
}

}  // namespace gpudays
