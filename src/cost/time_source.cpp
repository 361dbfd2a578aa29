// The planner-backed time source, and the choice between it and the benchmark-backed one.
#include "cost/time_source.h"

#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"

namespace gpudays {
namespace {

class PlanTimeSource final : public TrainingTimeSource {
 public:
  explicit PlanTimeSource(PlanOptions options) : options_(std::move(options)) {}

  std::string name() const override {
    return fmt::format("planner best row (preset {})", to_string(options_.preset));
  }

  TrainingTime training_time(const ModelSpec& model,
                             const GpuSpec& gpu,
                             const ClusterShape& layout) const override {
    TrainingTime t;
    t.provenance = name();
    const Cluster cluster{layout, &gpu};
    PlanResult result;
    try {
      result = plan(model, cluster, options_);
    } catch (const InputError& e) {
      t.reason = e.what();
      return t;
    }
    if (!result.best) {
      t.reason = "does not fit: " + nothing_fits_reason(result, gpu);
      return t;
    }
    const PlanRow& b = *result.best;
    t.fits = true;
    t.training_days = b.training_days;
    t.gpu_days = b.gpu_days;
    t.mfu = b.mfu;
    t.training_days_range = b.training_days_range;
    if (b.error_band) {
      t.range_basis = b.error_band->basis;
      if (!b.error_band->far.empty())
        t.range_basis += fmt::format(", wider: {}", b.error_band->far_summary());
    }
    t.settings = fmt::format("{}, micro-batch {}, accumulation {}",
                             describe(b.config.methods),
                             b.config.micro_batch_size,
                             b.config.grad_acc_steps);
    return t;
  }

 private:
  PlanOptions options_;
};

}  // namespace

std::string to_string(TimeSourceKind kind) {
  return kind == TimeSourceKind::kPlan ? "plan" : "bench";
}

std::optional<TimeSourceKind> parse_time_source(const std::string& text) {
  if (text == "plan") return TimeSourceKind::kPlan;
  if (text == "bench") return TimeSourceKind::kBench;
  return std::nullopt;
}

const std::vector<std::string>& time_source_names() {
  static const std::vector<std::string> kNames = {"plan", "bench"};
  return kNames;
}

std::unique_ptr<TrainingTimeSource> make_time_source(const TimeSourceOptions& options) {
  if (options.kind == TimeSourceKind::kPlan) return std::make_unique<PlanTimeSource>(options.plan);
  if (options.catalog == nullptr) throw std::logic_error("a bench time source without a catalog");
  return make_bench_time_source(options.results_path, *options.catalog, options.rule);
}

}  // namespace gpudays
