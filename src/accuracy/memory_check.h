// The planner's peak memory per GPU against the peaks the validation's sources publish (issue:
// "memory that never refuses what ran"). Each source's figure is what its tool reports, and the
// planner's breakdown (plan/memory_model.h) is cut to the same: the whole process as NVML and
// nvidia-smi show it (everything, the CUDA context and NCCL buffers too), the caching allocator's
// peak reservation (torchtitan's `memory: ... GiB`, torch.cuda.max_memory_reserved: all but
// those), or its peak allocation (torch.cuda.max_memory_allocated: nor the allocator's slack).
#pragma once

#include <optional>
#include <vector>

#include "catalog/measurement.h"
#include "plan/planner.h"

namespace gpudays {

struct ValidationCase;
struct ValidationReport;

// GiB per GPU of a published peak (`peak_memory_gib`, or `peak_memory_gb` read as 10^9 bytes);
// none when the source publishes none.
std::optional<double> published_peak_gib(const PublishedFigures& published);

struct MemoryComparison {
  size_t case_index = 0;  // into the report's cases
  double published_gib = 0.0;
  double predicted_gib = 0.0;
  double error = 0.0;   // predicted / published - 1: positive means the planner asks for more
  std::string measure;  // the published figure's: process, reserved or allocated
  // The same part at the ends of the peak's range (the allocator's slack at its floor and at the
  // high end of public runs'); none for an allocated figure, which holds no slack to vary.
  std::optional<double> predicted_low_gib;
  std::optional<double> predicted_high_gib;
  bool inside_range() const {
    return predicted_low_gib && published_gib >= *predicted_low_gib &&
           published_gib <= *predicted_high_gib;
  }
};

// Which of the allocator's slacks a planned peak is taken at: its usual share (the prediction),
// its floor (least_bytes) or the high end of its range (most_bytes).
enum class SlackEnd { kUsual, kLeast, kMost };

// The part of a planned peak that a published figure of `measure` counts (see above).
double compared_bytes(const MemoryBreakdown& memory,
                      const std::string& measure,
                      SlackEnd slack = SlackEnd::kUsual);

struct MemoryCheckReport {
  std::vector<MemoryComparison> comparisons;  // evaluated, trusted cases with a published peak
  double mape = 0.0;
  double mean_error = 0.0;
  double max_abs_error = 0.0;
  int within_10_percent = 0;
  int with_range = 0;    // comparisons whose figure counts the allocator's slack
  int inside_range = 0;  // of those, the published peaks inside the planned range
};

// The comparisons of the report's evaluated, trusted cases that publish a peak.
MemoryCheckReport check_memory(const ValidationReport& report);

}  // namespace gpudays
