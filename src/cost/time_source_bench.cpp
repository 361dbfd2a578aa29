// The benchmark-backed time source: the fastest successful trial in the results database for the
// model on that GPU type and layout. An option without one cannot be priced from measurements and
// says so.
#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "cost/time_source.h"
#include "results/results_db.h"

namespace gpudays {
namespace {

class BenchTimeSource final : public TrainingTimeSource {
 public:
  BenchTimeSource(const std::string& path, const Catalog& catalog, MeasurementRule rule)
      : db_(ResultsDb::open({.path = path, .read_only = true, .catalog = &catalog})), rule_(rule) {}

  std::string name() const override {
    if (rule_ == MeasurementRule::kReference) {
      return "the reference rule's measured pick (" + db_.path() + ")";
    }
    return "fastest measured trial (" + db_.path() + ")";
  }

  TrainingTime training_time(const ModelSpec& model,
                             const GpuSpec& gpu,
                             const ClusterShape& layout) const override {
    TrialFilter filter;
    filter.model_digest = model_digest(model);
    filter.gpu = gpu.name;
    filter.num_nodes = layout.num_nodes;
    filter.gpus_per_node = layout.gpus_per_node;
    filter.rule = rule_;
    const auto trials = db_.query(filter);
    const TrialRecord* best = fastest_ok(trials);
    TrainingTime out;
    if (best == nullptr) {
      out.reason = fmt::format("no successful {}benchmark trial on {} x {} in {}",
                               rule_ == MeasurementRule::kReference ? "reference-rule " : "",
                               layout.world_size(),
                               gpu.name,
                               db_.path());
      return out;
    }
    out.fits = true;
    out.training_days = best->training_days;
    out.gpu_days = best->gpu_days;
    out.mfu = best->mfu;
    out.settings = describe(best->config);
    out.provenance = fmt::format("fastest of {} trials, measured {} on {}",
                                 trials.size(),
                                 best->created_at,
                                 best->measured.device_name);
    return out;
  }

 private:
  ResultsDb db_;
  MeasurementRule rule_;
};

}  // namespace

std::unique_ptr<TrainingTimeSource> make_bench_time_source(const std::string& results_path,
                                                           const Catalog& catalog,
                                                           MeasurementRule rule) {
  return std::make_unique<BenchTimeSource>(results_path, catalog, rule);
}

}  // namespace gpudays
