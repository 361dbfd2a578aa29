// Predicted against published peak memory per GPU.
#include "accuracy/memory_check.h"

#include <algorithm>
#include <cmath>

#include "accuracy/validate.h"

namespace gpudays {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;

}  // namespace

std::optional<double> published_peak_gib(const PublishedFigures& p) {
  if (p.peak_memory_gib) return *p.peak_memory_gib;
  if (p.peak_memory_gb) return *p.peak_memory_gb * kGB / kGiB;
  return std::nullopt;
}

double compared_bytes(const MemoryBreakdown& memory, const std::string& measure, SlackEnd slack) {
  double bytes = memory.total_bytes();
  if (slack == SlackEnd::kLeast) bytes = memory.least_bytes();
  if (slack == SlackEnd::kMost) bytes = memory.most_bytes();
  if (measure == "process") return bytes;
  bytes -= memory.framework_bytes;  // context and NCCL buffers: outside the allocator
  if (measure == "reserved") return bytes;
  return memory.allocated_bytes();  // allocated: the allocator's slack left out too
}

MemoryCheckReport check_memory(const ValidationReport& report) {
  MemoryCheckReport out;
  double abs_sum = 0.0;
  double sum = 0.0;
  for (size_t i = 0; i < report.cases.size(); ++i) {
    const ValidationCase& v = report.cases[i];
    const std::optional<double> published = v.published_peak_gib;
    if (!published || !v.evaluated() || !v.trusted || !v.row) continue;
    MemoryComparison c;
    c.case_index = i;
    c.published_gib = *published;
    c.measure = v.published_memory_measure;
    c.predicted_gib = compared_bytes(v.row->memory, c.measure) / kGiB;
    c.error = c.predicted_gib / c.published_gib - 1.0;
    if (c.measure != "allocated") {
      c.predicted_low_gib = compared_bytes(v.row->memory, c.measure, SlackEnd::kLeast) / kGiB;
      c.predicted_high_gib = compared_bytes(v.row->memory, c.measure, SlackEnd::kMost) / kGiB;
      ++out.with_range;
      out.inside_range += c.inside_range() ? 1 : 0;
    }
    abs_sum += std::abs(c.error);
    sum += c.error;
    out.max_abs_error = std::max(out.max_abs_error, std::abs(c.error));
    out.within_10_percent += std::abs(c.error) <= 0.10 ? 1 : 0;
    out.comparisons.push_back(c);
  }
  if (!out.comparisons.empty()) {
    const double count = static_cast<double>(out.comparisons.size());
    out.mape = abs_sum / count;
    out.mean_error = sum / count;
  }
  return out;
}

}  // namespace gpudays
