// Fuzz target: a model file the loader accepts, planned on 2 x A100 80GB (plan/planner.h), as
// `gpudays plan --model-file` does. The input is a model TOML file (the model_toml corpus). A bug
// is any escape other than InputError (the planner's own consistency check throws logic_error),
// any sanitizer report (an overflow in the search space or the memory model), or a configuration
// that fits with a step time, days or MFU that are not finite and positive.
#include <cmath>

#include "catalog/gpu_loader.h"
#include "catalog/model_loader.h"
#include "fuzz_util.h"
#include "plan/planner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  static const GpuSpec gpu = load_gpu_file(GPUDAYS_SOURCE_DIR "/configs/gpus/a100-80gb-sxm.toml");
  const std::string path = fuzz::write_input(data, size, "plan-model.toml");
  fuzz::accepts([&] {
    const ModelSpec model = load_model_file(path);
    Cluster cluster;
    cluster.gpus_per_node = 2;
    cluster.gpu = &gpu;
    for (const PlanRow& row : plan(model, cluster, PlanOptions{}).rows) {
      if (!row.fits) continue;
      for (double v : {row.step_time_s, row.training_days, row.mfu, row.samples_per_s}) {
        if (!std::isfinite(v) || v <= 0.0) fuzz::fail("a fitting configuration has a figure <= 0");
      }
    }
  });
  return 0;
}
