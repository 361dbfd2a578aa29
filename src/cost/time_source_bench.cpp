// The benchmark-backed time source: the fastest successful trial in the results database for the
// model on that GPU type and layout. An option without one cannot be priced from measurements and
// says so.
#include <fmt/format.h>

#include "cost/time_source.h"
#include "results/results_db.h"

namespace gpudays {
namespace {

class BenchTimeSource final : public TrainingTimeSource {
 public:
  explicit BenchTimeSource(const std::string& path)
      : db_(ResultsDb::open({path.empty() ? "gpudays.db" : path, /*read_only=*/true})) {}

  std::string name() const override { return "fastest measured trial (" + db_.path() + ")"; }

  TrainingTime training_time(const ModelSpec& model,
                             const GpuSpec& gpu,
                             const ClusterShape& layout) const override {
    const auto trials = db_.query({model.name, gpu.name, layout.num_nodes, layout.gpus_per_node});
    const TrialRecord* best = fastest_ok(trials);
    TrainingTime out;
    if (best == nullptr) {
      out.reason = fmt::format("no successful benchmark trial on {} x {} in {}",
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
};

}  // namespace

std::unique_ptr<TrainingTimeSource> make_bench_time_source(const std::string& results_path) {
  return std::make_unique<BenchTimeSource>(results_path);
}

}  // namespace gpudays
