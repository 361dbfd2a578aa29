// The peak-memory check as text and JSON.
#include "rows/memory_check_rows.h"

#include <fmt/format.h>

#include "rows/table.h"

namespace gpudays {

void print_memory_check(std::ostream& out, const ValidationReport& report) {
  const MemoryCheckReport& m = report.memory;
  if (m.comparisons.empty()) return;
  out << "\nPeak memory per GPU against the published peaks (error = predicted / published - 1; "
         "positive: the planner asks for more; measure: what the published figure counts, the "
         "process as nvidia-smi shows it, the allocator's reservation or its allocation):\n";
  Table table({"case", "measure", "published GiB", "predicted GiB", "error", "fits"});
  for (const MemoryComparison& c : m.comparisons) {
    const ValidationCase& v = report.cases[c.case_index];
    table.add_row({v.source_id + "/" + v.name,
                   c.measure,
                   fmt::format("{:.1f}", c.published_gib),
                   fmt::format("{:.1f}", c.predicted_gib),
                   fmt::format("{:+.1f}%", 100.0 * c.error),
                   v.row && v.row->fits ? "yes" : "no"});
  }
  table.print(out);
  out << fmt::format(
      "memory: {} cases, MAPE {:.1f}%, mean {:+.1f}%, max |error| {:.1f}%, {} within 10%\n",
      m.comparisons.size(),
      100.0 * m.mape,
      100.0 * m.mean_error,
      100.0 * m.max_abs_error,
      m.within_10_percent);
}

nlohmann::json memory_check_json(const ValidationReport& report) {
  const MemoryCheckReport& m = report.memory;
  nlohmann::json cases = nlohmann::json::array();
  for (const MemoryComparison& c : m.comparisons) {
    const ValidationCase& v = report.cases[c.case_index];
    cases.push_back({{"case", v.source_id + "/" + v.name},
                     {"measure", c.measure},
                     {"published_gib", c.published_gib},
                     {"predicted_gib", c.predicted_gib},
                     {"error", c.error},
                     {"fits", v.row && v.row->fits}});
  }
  return {{"cases", cases},
          {"count", m.comparisons.size()},
          {"mape", m.mape},
          {"mean_error", m.mean_error},
          {"max_abs_error", m.max_abs_error},
          {"within_10_percent", m.within_10_percent}};
}

}  // namespace gpudays
