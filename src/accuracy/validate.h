// Validation of the planner against published measurements (configs/measurements): each
// case is planned with its published configuration pinned (plan_configuration), and the planner's
// figure is compared with the published one in the source's own unit. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/memory_check.h"
#include "catalog/measurement.h"
#include "plan/error_band.h"
#include "plan/op_breakdown.h"
#include "plan/planner.h"

namespace gpudays {

class Catalog;

// One case: what was pinned, the published and predicted figures, and the error.
struct ValidationCase {
  std::string source_id;
  std::string name;
  std::string citation;
  std::string model;
  std::string gpu;
  MeasurementSplit split = MeasurementSplit::kFit;
  bool trusted = true;
  int64_t nodes = 1;
  int64_t gpus_per_node = 1;
  int64_t gpus() const { return nodes * gpus_per_node; }
  BandPoint point;  // GPU, generation, family, GPUs and parameters: what its error band goes by

  // Skipped: not planned (not representable, untrusted without include_untrusted, or a published
  // configuration that is physically meaningless); `skip_reason` says why.
  bool skipped = false;
  std::string skip_reason;

  Configuration config;      // what was planned
  int64_t global_batch = 0;  // samples per step, as planned
  // How the published configuration was mapped onto the planner's, and what it does not model
  // (selective checkpointing planned as full, HSDP as full sharding, unpublished parts searched).
  std::vector<std::string> notes;

  // A memory-only case: the source publishes a peak memory per GPU and no throughput. It is
  // planned as any other, but has no time to compare: metric is "peak_memory_gib", published and
  // predicted are GiB per GPU and error is the memory error (predicted / published - 1, positive:
  // the planner asks for more). It is in the peak-memory check only, never in a time statistic
  // (MAPE, worst cases, range coverage, error bands, the calibration fit).
  bool memory_only = false;

  std::string metric;        // the published key compared, e.g. "tokens_per_s", "step_time_ms"
  double published = 0.0;    // that figure as published, in its unit
  double predicted = 0.0;    // the planner's figure in the same unit
  bool approximate = false;  // the source marks its figure as approximate
  // predicted throughput / published throughput - 1: positive means the planner is optimistic.
  // For step times and run times, throughput at the published batch is exactly their inverse.
  // Memory-only cases: the memory error (above).
  double error = 0.0;
  std::optional<double> published_tokens_per_s_per_gpu;  // when plain arithmetic gives it
  double predicted_tokens_per_s_per_gpu = 0.0;  // vision: images (convnext) or patches+cls (vit)
  std::optional<PlanRow> row;                   // the planner's row (absent when skipped)
  std::optional<double> published_peak_gib;     // the source's peak memory per GPU, if any
  std::string published_memory_measure = "process";  // what that peak counts (memory_check.h)
  // Where a micro-step of the planned configuration goes (plan/op_breakdown.h); filled only when
  // ValidationOptions::op_breakdown asks for it.
  std::vector<OpTime> ops;

  bool evaluated() const { return !skipped; }
  // Planned and compared on time: what the time statistics take (trusted cases only).
  bool timed() const { return evaluated() && !memory_only; }
};

// Mean absolute percentage error of a group of trusted cases compared on time (timed()).
struct ErrorSummary {
  std::string group;  // a GPU name, a split ("fit", "check") or "all"
  int cases = 0;
  double mape = 0.0;        // mean |error|, a fraction
  double mean_error = 0.0;  // mean signed error (bias): positive is optimistic
  double max_abs_error = 0.0;
  // 10th and 90th percentiles of the signed error: the error band of plan/error_band.h.
  double low_error = 0.0;
  double high_error = 0.0;
};

// Whether published figures fall inside the ranges the planner states: each checking-half case
// against the band built from the fitting half's residuals alone, as a user would have seen it.
struct RangeCoverage {
  std::string group;  // "all", a GPU generation or a model family
  int cases = 0;
  int inside = 0;
  double share() const { return cases > 0 ? static_cast<double>(inside) / cases : 0.0; }
};

struct CoverageReport {
  RangeCoverage overall;
  std::vector<RangeCoverage> by_architecture;  // sorted by name
  std::vector<RangeCoverage> by_family;
  std::vector<size_t> outside;  // indices into the report's cases
};

// The accuracy the planner is held to (docs/planner.md, "Validation"): the checking half's MAPE,
// and each GPU generation's and family's MAPE in the checking half where it has enough cases.
inline constexpr double kCheckMapeTarget = 0.08;
inline constexpr double kGroupMapeTarget = 0.15;
inline constexpr int kGroupTargetMinCases = 3;

// Whether a group's MAPE meets its target; absent for a group with too few cases to be held to it.
std::optional<bool> group_target_met(const ErrorSummary& s);

struct ValidationOptions {
  // Plan untrusted sources' cases too (reported apart, never in a summary); otherwise they are
  // skipped with the reason.
  bool include_untrusted = false;
  size_t worst = 5;  // how many worst cases to list
  // The cases were selected by GPU ("v100-16gb"): the targets hold the whole checking half, so
  // the report says that its summaries are of this selection only. Empty: every GPU.
  std::string selected_gpu;
  std::string selected_case;  // likewise, one case selected by name (--case)
  // Also list each planned case's operations (ValidationCase::ops).
  bool op_breakdown = false;
};

struct ValidationReport {
  std::vector<ValidationCase> cases;   // every case given, in order, skipped ones included
  ErrorSummary overall;                // trusted cases compared on time (not memory-only)
  std::vector<ErrorSummary> by_gpu;    // sorted by GPU name
  std::vector<ErrorSummary> by_split;  // fit, then check (those present)
  // The checking half by GPU generation ("gpu volta") and by family ("family roberta"), each
  // kind sorted by name: what the per-group target holds to.
  std::vector<ErrorSummary> check_by_group;
  std::string selected_gpu;   // ValidationOptions'
  std::string selected_case;  // ValidationOptions'
  std::vector<size_t> worst;  // indices into `cases`: trusted timed, largest |error| first
  // Absent unless both halves have trusted cases compared on time.
  std::optional<CoverageReport> coverage;
  MemoryCheckReport memory;  // predicted against published peak memory, where published
};

// The coverage of the checking half's cases by the fitting half's bands (exposed for tests).
std::optional<CoverageReport> range_coverage(const std::vector<ValidationCase>& cases);

// Which cases to validate: a split (empty: all), a GPU (catalog name; empty: all) and a case
// (its name, or "source/name" where names repeat across sources; empty: all).
struct ValidationFilter {
  std::optional<MeasurementSplit> split;
  std::string gpu;
  std::string case_name;
};

// The cases of `files` that pass the filter, in file order.
std::vector<Measurement> select_measurements(const std::vector<MeasurementFile>& files,
                                             const ValidationFilter& filter);

// Plans every case with its published configuration pinned and compares. Throws only for a
// planner bug (std::logic_error from the ceiling check); a case that cannot be planned is skipped
// with its reason.
ValidationReport validate(const std::vector<Measurement>& measurements,
                          const Catalog& catalog,
                          const PlanOptions& options,
                          const ValidationOptions& validation = {});

// The error summary of these cases (exposed for tests).
ErrorSummary summarize_errors(const std::string& group, const std::vector<double>& errors);

}  // namespace gpudays
