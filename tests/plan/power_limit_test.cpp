// A power limit below the TDP: the GPU's compute slows with its clock (the cube root of the power
// ratio), its memory bandwidth does not; validate and plan take the limit (docs/planner.md,
// "Power limits").
#include <cmath>

#include <gtest/gtest.h>

#include "catalog/gpu_spec.h"
#include "plan/device_model.h"
#include "plan/planner.h"
#include "plan/workload.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

TEST(PowerLimit, ComputeRunsAtTheCubeRootOfThePowerRatio) {
  GpuSpec h100 = catalog().gpu("h100-sxm");
  ASSERT_EQ(h100.tdp_w, 700.0);
  EXPECT_EQ(h100.compute_clock_factor(), 1.0);  // no limit: the TDP
  h100.power_limit_w = 500.0;
  EXPECT_NEAR(h100.compute_clock_factor(), std::cbrt(500.0 / 700.0), 1e-12);
  EXPECT_NEAR(h100.compute_clock_factor(), 0.894, 1e-3);
  h100.power_limit_w = 700.0;
  EXPECT_EQ(h100.compute_clock_factor(), 1.0);
}

// The limited GPU's GEMMs and fused attention take 1 / 0.894 as long; a memory-bound kernel
// (the HBM keeps its clock) takes as long as before.
TEST(PowerLimit, SlowsArithmeticNotMemoryTraffic) {
  const GpuSpec& full = catalog().gpu("h100-sxm");
  GpuSpec limited = full;
  limited.power_limit_w = 500.0;
  const DeviceModel at_tdp(full, Precision::kBf16, /*free_lunch=*/true);
  const DeviceModel capped(limited, Precision::kBf16, /*free_lunch=*/true);
  const double factor = limited.compute_clock_factor();
  const Op gemm = make_matmul("gemm", 8192, 8192, 8192, 2.0);
  for (bool backward : {false, true}) {
    EXPECT_NEAR(capped.op_time_s(gemm, backward) * factor, at_tdp.op_time_s(gemm, backward), 1e-12);
  }
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.arch.seq_len = 8192;  // the fused attention's compute dominates its traffic
  WorkloadOptions o;
  o.fused_attention = true;
  const Workload w = build_workload(gpt, o);
  const Op* attention = nullptr;
  for (const Op& op : w.blocks.front().ops)
    if (op.cls == OpClass::kFusedAttention) attention = &op;
  ASSERT_NE(attention, nullptr);
  for (bool backward : {false, true}) {
    EXPECT_NEAR(capped.op_time_s(*attention, backward) * factor,
                at_tdp.op_time_s(*attention, backward),
                1e-12);
  }
  const Op add = make_memory("add", 1e9, 2.0, 0.0);
  EXPECT_DOUBLE_EQ(capped.op_time_s(add, false), at_tdp.op_time_s(add, false));
}

// A whole plan: the limited GPUs are slower, by less than the arithmetic alone (memory-bound
// kernels, communication and the optimizer keep their time).
TEST(PowerLimit, APlanOnLimitedGpusIsSlowerByLessThanTheClock) {
  const ModelSpec& model = catalog().model("pythia-1b");
  GpuSpec limited = catalog().gpu("h100-sxm");
  limited.power_limit_w = 500.0;
  PlanOptions options;
  options.pin.pin(&MethodSet::free_lunch, true)
      .pin(&MethodSet::activation_checkpointing, false)
      .pin(&MethodSet::sharding, Sharding::kNone);
  options.pin.micro_batch_size = 8;
  const PlanResult full = plan(model, Cluster{{1, 4}, &catalog().gpu("h100-sxm")}, options);
  const PlanResult capped = plan(model, Cluster{{1, 4}, &limited}, options);
  ASSERT_TRUE(full.best && capped.best);
  const double ratio = capped.best->step_time_s / full.best->step_time_s;
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 1.0 / limited.compute_clock_factor());
}

}  // namespace
}  // namespace gpudays
