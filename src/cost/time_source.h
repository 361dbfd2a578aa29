// Where a hardware option's training days come from: the analytic planner (`--source plan`) or
// benchmark measurements (`--source bench`: the fastest successful trial in the SQLite results
// database). The cost model sees only this.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "cost/hardware_cost.h"
#include "plan/planner.h"
#include "results/trial_record.h"

namespace gpudays {

enum class TimeSourceKind { kPlan, kBench };
std::string to_string(TimeSourceKind kind);
// "plan" or "bench"; nothing for any other name (the caller names its flag and the choices).
std::optional<TimeSourceKind> parse_time_source(const std::string& text);
const std::vector<std::string>& time_source_names();

struct TrainingTime {
  bool fits = false;
  double training_days = 0.0;
  double gpu_days = 0.0;
  double mfu = 0.0;
  // The planner's range from its validation residuals (plan/error_band.h), and what it rests on;
  // absent for measured times and when the planner has no bands.
  std::optional<TimeRange> training_days_range;
  std::string range_basis;
  std::string settings;    // "free-lunch + zero_1, micro-batch 16, accumulation 16"
  std::string reason;      // why it cannot run, when !fits
  std::string provenance;  // what produced the numbers: "planner best row (preset all)"
};

class TrainingTimeSource {
 public:
  virtual ~TrainingTimeSource() = default;
  virtual std::string name() const = 0;
  // An option that cannot run (nothing fits, a batch that does not split) comes back with
  // fits = false and the reason; it is never dropped or thrown.
  virtual TrainingTime training_time(const ModelSpec& model,
                                     const GpuSpec& gpu,
                                     const ClusterShape& layout) const = 0;
};

class Catalog;

struct TimeSourceOptions {
  TimeSourceKind kind = TimeSourceKind::kPlan;
  PlanOptions plan;                  // kPlan: preset and model constants
  std::string results_path;          // kBench: the SQLite results database (empty: the default one)
  const Catalog* catalog = nullptr;  // kBench: what its rows are re-derived against
  // kBench: whose trials (bench --strategy reference stores the reference benchmark's rule apart):
  // the fastest of gpudays' rule, or the reference rule's pick (its largest micro-batch that fits)
  MeasurementRule rule = MeasurementRule::kGpudays;
};

std::unique_ptr<TrainingTimeSource> make_time_source(const TimeSourceOptions& options);
// The trials of the model itself (its digest, not its name), re-derived against `catalog`, which
// outlives the source. Throws InputError when the database is missing, foreign or corrupted.
std::unique_ptr<TrainingTimeSource> make_bench_time_source(
    const std::string& results_path,
    const Catalog& catalog,
    MeasurementRule rule = MeasurementRule::kGpudays);

}  // namespace gpudays
