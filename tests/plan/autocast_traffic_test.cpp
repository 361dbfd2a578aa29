// Memory traffic the time model charges outside the workload's operations (plan/time_model.cpp).
// Mixed precision without sharding (the engine's autocast over fp32 weights) pays, every
// micro-step, the weight casts and the fp32 gradient casts and accumulation at memory bandwidth;
// fp32 and the sharded stages (a half-precision working copy) do not. The optimizer step moves
// what its kernels read and write: the unfused loop's one kernel per line of the update moves
// about three times what the fused kernel does.
#include <gtest/gtest.h>

#include "plan/memory_model.h"
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

// A half-precision model with the fp32 master copy in the optimizer (apex AMP O2) has no
// autocast: no casts per micro-step; its update casts the fp16 gradients up and writes the working
// copy (6 + 6 bytes per parameter), as the sharded stages do. Its memory is the ZeRO paper's
// 2 + 2 + 12 bytes per parameter with no compute-dtype weight copies.
TEST(AutocastTraffic, AHalfPrecisionModelCastsNothingPerMicroStep) {
  const GpuSpec& gpu = test::catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  const DeviceModel device(gpu, Precision::kFp16, /*free_lunch=*/false);
  WorkloadSummary w;
  w.forward_s = 0.1;
  w.backward_s = 0.2;
  const double params = 1e9;
  TimeModelOptions half;
  half.half_precision_model = true;
  const auto step = [&](const TimeModelOptions& o) {
    return predict_step_time(params, Precision::kFp16, {}, cluster, 4, w, device, o);
  };
  EXPECT_DOUBLE_EQ(step(half).compute_s, 4 * (w.forward_s + w.backward_s));
  EXPECT_GT(step({}).compute_s, step(half).compute_s);
  EXPECT_NEAR(step(half).optimizer_s - step({}).optimizer_s,
              params * (6.0 + 6.0) / device.bandwidth_bytes_per_s(),
              1e-12);

  MemoryModelConstants autocast, half_memory;
  half_memory.half_precision_model = true;
  const auto states = [&](const MemoryModelConstants& c) {
    const MemoryBreakdown m = predict_memory(params, Precision::kFp16, {}, cluster, {}, c);
    return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes;
  };
  EXPECT_DOUBLE_EQ(states(half_memory), 16.0 * params);
  EXPECT_DOUBLE_EQ(states(autocast), 18.0 * params);
}

// Bytes per parameter counted kernel by kernel from the update's lines (fp32 state, fp32
// gradients): Adam(W) unfused lerp_ 12, mul_ 8, addcmul_ 16, sqrt / bias + eps 24, addcdiv_ 16,
// and AdamW's p.mul_ 8 or Adam's grad.add(p) 12;
// SGD with Nesterov momentum mul_ 8, add_ 12, add 12, add_ 12.
TEST(OptimizerTraffic, UnfusedUpdatesMoveWhatTheirKernelsReadAndWrite) {
  EXPECT_DOUBLE_EQ(adam_step_bytes_per_param(/*fused=*/true, WeightDecay::kNone, 4.0), 28.0);
  EXPECT_DOUBLE_EQ(adam_step_bytes_per_param(/*fused=*/false, WeightDecay::kNone, 4.0), 76.0);
  EXPECT_DOUBLE_EQ(adam_step_bytes_per_param(/*fused=*/false, WeightDecay::kDecoupled, 4.0), 84.0);
  EXPECT_DOUBLE_EQ(adam_step_bytes_per_param(/*fused=*/false, WeightDecay::kL2, 4.0), 88.0);
  EXPECT_DOUBLE_EQ(sgd_nesterov_step_bytes_per_param(/*fused=*/false, 4.0), 44.0);
  EXPECT_DOUBLE_EQ(sgd_nesterov_step_bytes_per_param(/*fused=*/true, 4.0), 20.0);
}

// The plain method set runs the unfused loop; fp16's loss scaling adds an unscaling pass (read and
// write each fp32 gradient) unless the stack runs without it; weight decay adds AdamW's p.mul_. A
// sharded stage casts its half-precision gradient shard and writes the working copy (6 + 6).
TEST(OptimizerTraffic, TheStepChargesTheUpdateItRuns) {
  const GpuSpec& gpu = test::catalog().gpu("v100-16gb");
  const Cluster cluster{{1, 1}, &gpu};
  const DeviceModel device(gpu, Precision::kFp16, /*free_lunch=*/false);
  WorkloadSummary w;
  w.forward_s = 0.1;
  w.backward_s = 0.2;
  const double params = 3.0e8;
  const double bw = device.bandwidth_bytes_per_s();
  const auto optimizer_s = [&](Precision precision, bool fused, const TimeModelOptions& o) {
    const MethodSet methods{.free_lunch = fused};
    return predict_step_time(params, precision, methods, cluster, 1, w, device, o).optimizer_s;
  };
  const TimeModelOptions adam;
  // fp32 gradients under autocast: the update and clipping's norm read and scaling (4 + 4 + 4).
  EXPECT_NEAR(optimizer_s(Precision::kFp32, false, adam), params * (76.0 + 12.0) / bw, 1e-12);
  EXPECT_NEAR(optimizer_s(Precision::kFp32, true, adam), params * (28.0 + 12.0) / bw, 1e-12);
  EXPECT_NEAR(optimizer_s(Precision::kFp16, false, adam), params * (76.0 + 12.0 + 8.0) / bw, 1e-12);
  TimeModelOptions no_scaling;
  no_scaling.fp16_loss_scaling = false;
  EXPECT_NEAR(optimizer_s(Precision::kFp16, false, no_scaling), params * (76.0 + 12.0) / bw, 1e-12);
  TimeModelOptions decay;
  decay.weight_decay = WeightDecay::kDecoupled;
  EXPECT_NEAR(optimizer_s(Precision::kFp32, false, decay), params * (84.0 + 12.0) / bw, 1e-12);
  // A measured stack's fused optimizer without free-lunch (apex's FusedAdam), and the reverse.
  TimeModelOptions fused_alone;
  fused_alone.fused_optimizer = true;
  EXPECT_NEAR(
      optimizer_s(Precision::kFp32, false, fused_alone), params * (28.0 + 12.0) / bw, 1e-12);
  TimeModelOptions looped;
  looped.fused_optimizer = false;
  EXPECT_NEAR(optimizer_s(Precision::kFp32, true, looped), params * (76.0 + 12.0) / bw, 1e-12);
  TimeModelOptions sgd;
  sgd.optimizer = OptimizerUpdate::kSgdNesterov;
  EXPECT_NEAR(optimizer_s(Precision::kFp32, false, sgd), params * (44.0 + 12.0) / bw, 1e-12);
  const MethodSet zero1{.sharding = Sharding::kZero1};
  const Cluster two{{1, 2}, &gpu};
  const double zero1_s =
      predict_step_time(params, Precision::kFp16, zero1, two, 1, w, device, adam).optimizer_s;
  EXPECT_NEAR(zero1_s, params / 2 * (6.0 + 8.0 + 12.0 + 76.0 + 6.0) / bw, 1e-12);
}

}  // namespace
}  // namespace gpudays
