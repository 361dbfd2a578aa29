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

}  // namespace
}  // namespace gpudays
