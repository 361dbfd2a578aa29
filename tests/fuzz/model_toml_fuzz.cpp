// Fuzz target: the model TOML loader (load_model_file, catalog/model_loader.h), as `--model-file`
// and the catalog use it. A bug is any escape other than InputError, any sanitizer report, or an
// accepted model the rest of the program cannot compute with: its exact parameter count must be
// positive and overflow-free (UBSan aborts on signed overflow), and the planner's workload of one
// sample must have finite, positive FLOPs.
#include <cmath>

#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "fuzz_util.h"
#include "plan/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  const std::string path = fuzz::write_input(data, size, "model.toml");
  fuzz::accepts([&] {
    const ModelSpec model = load_model_file(path);
    if (count_params(model).total <= 0) fuzz::fail("an accepted model has no parameters");
    const double flops = forward_flops_per_sample(model);
    if (!std::isfinite(flops) || flops <= 0.0) {
      fuzz::fail("an accepted model's forward FLOPs per sample are not finite and positive");
    }
    build_workload(model, WorkloadOptions{});
  });
  return 0;
}
