// Fuzz target: the GPU TOML loader (load_gpu_file, catalog/gpu_loader.h), as the catalog reads
// configs/gpus/. A bug is any escape other than InputError, any sanitizer report, or an accepted
// GPU whose figures break what the planner and the cost analysis divide by and multiply with:
// every figure finite, the required peaks, memory, bandwidths and TDP positive, prices >= 0, and
// pythia-160m planned on 2 of them without an internal error, every fitting configuration's step
// time, days and MFU finite and positive.
#include <cmath>

#include "catalog/gpu_loader.h"
#include "catalog/model_loader.h"
#include "fuzz_util.h"
#include "plan/planner.h"

namespace {

void check_accepted(const gpudays::GpuSpec& g) {
  for (double v : {g.compute_capability,
                   g.peak_fp32_tflops,
                   g.peak_tf32_tflops,
                   g.peak_fp16_tflops,
                   g.peak_bf16_tflops,
                   g.matmul_ceiling_fraction,
                   g.memory_bandwidth_gb_per_s,
                   g.gpu_link_gb_per_s,
                   g.pair_bridge_gb_per_s,
                   g.host_link_gb_per_s,
                   g.tdp_w,
                   g.purchase_usd,
                   g.cloud_usd_per_gpu_hour}) {
    if (!std::isfinite(v) || v < 0.0)
      gpudays::fuzz::fail("an accepted GPU has a figure < 0 or not finite");
  }
  if (g.peak_fp32_tflops <= 0.0 || g.peak_fp16_tflops <= 0.0 || g.matmul_ceiling_fraction <= 0.0 ||
      g.matmul_ceiling_fraction > 1.0 || g.memory_bytes <= 0 ||
      g.memory_bandwidth_gb_per_s <= 0.0 || g.gpu_link_gb_per_s <= 0.0 ||
      g.host_link_gb_per_s <= 0.0 || g.tdp_w <= 0.0) {
    gpudays::fuzz::fail("an accepted GPU has a zero peak, memory, bandwidth or TDP");
  }
  if (g.name.empty()) gpudays::fuzz::fail("an accepted GPU has no name");
}

void check_plans(const gpudays::GpuSpec& g) {
  using namespace gpudays;
  static const ModelSpec model =
      load_model_file(GPUDAYS_SOURCE_DIR "/configs/models/pythia-160m.toml");
  Cluster cluster;
  cluster.gpus_per_node = 2;
  cluster.gpu = &g;
  for (const PlanRow& row : plan(model, cluster, PlanOptions{}).rows) {
    if (!row.fits) continue;
    for (double v : {row.step_time_s, row.training_days, row.mfu, row.samples_per_s}) {
      if (!std::isfinite(v) || v <= 0.0)
        fuzz::fail("a fitting configuration has a figure <= 0 or not finite");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  const std::string path = fuzz::write_input(data, size, "gpu.toml");
  fuzz::accepts([&] {
    const GpuSpec gpu = load_gpu_file(path);
    check_accepted(gpu);
    check_plans(gpu);
  });
  return 0;
}
