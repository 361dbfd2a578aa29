// Mixed precision without sharding (the engine's autocast over fp32 weights) pays, every
// micro-step, the weight casts and the fp32 gradient casts and accumulation at memory bandwidth;
// fp32 and the sharded stages (a half-precision working copy) do not (plan/time_model.cpp).
#include <gtest/gtest.h>

#include "plan/time_model.h"
#include "test_util.h"

namespace gpudays {
namespace {

TEST(AutocastTraffic, MixedPrecisionWithoutShardingPaysItEveryMicroStep) {
  const GpuSpec& gpu = test::catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  const DeviceModel device(gpu, Precision::kBf16, /*free_lunch=*/false);
  WorkloadSummary w;
  w.forward_s = 0.1;
  w.backward_s = 0.2;
  const double params = 1e9;
  const int64_t acc = 4;
  const auto compute_s = [&](Precision precision, Sharding sharding) {
    const MethodSet methods{.sharding = sharding, .offloading = sharding != Sharding::kNone};
    return predict_step_time(params, precision, methods, cluster, acc, w, device, {}).compute_s;
  };
  const double plain_s = acc * (w.forward_s + w.backward_s);
  EXPECT_DOUBLE_EQ(compute_s(Precision::kFp32, Sharding::kNone), plain_s);
  EXPECT_DOUBLE_EQ(compute_s(Precision::kBf16, Sharding::kZero1), plain_s);
  // 12 bytes per parameter every micro-step (casts both ways), 12 more from the second on
  // (accumulation into the fp32 gradient).
  const double bytes = params * (12.0 * acc + 12.0 * (acc - 1));
  EXPECT_NEAR(compute_s(Precision::kBf16, Sharding::kNone) - plain_s,
              bytes / device.bandwidth_bytes_per_s(),
              1e-12);
}

// A measured stack whose ZeRO stage 1 keeps fp32 weights (Lightning's DDPStrategyZero1 over
// torch's ZeroRedundancyOptimizer) pays the same traffic at stage 1; stage 2 never does.
TEST(AutocastTraffic, StageOneWithFp32WeightsPaysItToo) {
  const GpuSpec& gpu = test::catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 8}, &gpu};
  const DeviceModel device(gpu, Precision::kBf16, /*free_lunch=*/false);
  WorkloadSummary w;
  w.forward_s = 0.1;
  w.backward_s = 0.2;
  TimeModelOptions fp32_weights;
  fp32_weights.autocast_fp32_weights_at_stage_1 = true;
  const auto compute_s = [&](Sharding sharding, const TimeModelOptions& o) {
    const MethodSet methods{.sharding = sharding};
    return predict_step_time(1e9, Precision::kBf16, methods, cluster, 4, w, device, o).compute_s;
  };
  EXPECT_DOUBLE_EQ(compute_s(Sharding::kZero1, fp32_weights), compute_s(Sharding::kNone, {}));
  EXPECT_LT(compute_s(Sharding::kZero1, {}), compute_s(Sharding::kZero1, fp32_weights));
  EXPECT_DOUBLE_EQ(compute_s(Sharding::kZero2, fp32_weights), compute_s(Sharding::kZero2, {}));
}

}  // namespace
}  // namespace gpudays
