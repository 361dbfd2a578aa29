// The 2020-era fp16 optimizers' per-step work (plan/fp16_optimizer.h): the traffic, kernels and
// Python operations of their per-tensor checks as their code has them, and DeepSpeed's ZeRO
// stage 1 reduce-scatter after the whole backward.
#include "plan/fp16_optimizer.h"

#include <gtest/gtest.h>

#include "plan/time_model.h"
#include "test_util.h"

namespace gpudays {
namespace {

TEST(Fp16Optimizer, NamesRoundTripAndOthersAreRefused) {
  for (const char* name : {"torch", "megatron_2020", "deepspeed_zero1_2020"}) {
    const auto code = parse_fp16_optimizer(name);
    ASSERT_TRUE(code.has_value()) << name;
    EXPECT_EQ(to_string(*code), name);
  }
  EXPECT_FALSE(parse_fp16_optimizer("apex").has_value());
  EXPECT_FALSE(parse_fp16_optimizer("").has_value());
}

// Megatron-LM's GPT-2 layer holds 12 tensors where the engine's holds 16 (24 layers: 390 - 96 =
// 294). float(x.float().sum()) on each fp16 gradient (read 2, write 4, read 4; three
// kernels and three Python operations), then p.grad.norm(2).item() on each fp32 master gradient
// (read 4; two of each). torch's own has no extra.
TEST(Fp16Optimizer, MegatronChecksEveryTensorTwice) {
  const Fp16OptimizerExtra torch =
      fp16_optimizer_extra(Fp16Optimizer::kTorch, 1e9, 390, 24, 2.0, 1);
  EXPECT_EQ(torch.bytes, 0.0);
  EXPECT_EQ(torch.python_ops, 0.0);
  const Fp16OptimizerExtra m =
      fp16_optimizer_extra(Fp16Optimizer::kMegatron2020, 1e9, 390, 24, 2.0, 1);
  EXPECT_DOUBLE_EQ(m.bytes, 1e9 * (10.0 + 4.0));
  EXPECT_DOUBLE_EQ(m.kernels, 294.0 * 5.0);
  EXPECT_DOUBLE_EQ(m.python_ops, 294.0 * 5.0);
  EXPECT_TRUE(m.serial_gradient_collectives);
  EXPECT_FALSE(torch.serial_gradient_collectives);
}

// DeepSpeed's stage 1 (48 layers: 774 - 192 = 582 tensors): every gradient flattened and scaled (4
// x 2 bytes), checked and normed (2 x 10), over the whole model whatever the rank count; its own
// shard copied back and flattened into fp32 (4 x 2 + 8 over the ranks).
TEST(Fp16Optimizer, DeepSpeedStageOneTouchesEveryGradientNotOnlyItsShard) {
  const auto ds = [](double gpus) {
    return fp16_optimizer_extra(Fp16Optimizer::kDeepSpeedZero1_2020, 1.5e9, 774, 48, 2.0, gpus);
  };
  EXPECT_DOUBLE_EQ(ds(8).bytes, 1.5e9 * 28.0 + 1.5e9 / 8 * 16.0);
  EXPECT_DOUBLE_EQ(ds(8).kernels, 582.0 * 6.0);
  EXPECT_DOUBLE_EQ(ds(8).python_ops, 582.0 * 6.0);
  EXPECT_TRUE(ds(8).serial_gradient_collectives);
  EXPECT_GT(ds(64).bytes, 1.5e9 * 28.0);  // more ranks shrink the shard's part only
  EXPECT_LT(ds(64).bytes, ds(8).bytes);
}

// The host and the GPU take turns: the passes' bytes and kernels at the device's rates plus the
// Python operations at the Python dispatch rate.
TEST(Fp16Optimizer, TimeIsTheGpuPassesPlusThePythonLoop) {
  const GpuSpec& gpu = test::catalog().gpu("v100-32gb");
  DeviceModelConstants constants;
  constants.kernel_overhead_s = 10e-6;
  const DeviceModel device(gpu, Precision::kFp16, /*free_lunch=*/false, constants);
  const Fp16OptimizerExtra m =
      fp16_optimizer_extra(Fp16Optimizer::kMegatron2020, 1e9, 390, 24, 2.0, 1);
  const double expected = m.bytes / device.bandwidth_bytes_per_s() + m.kernels * 10e-6 +
                          m.python_ops * constants.python_dispatch_s;
  EXPECT_NEAR(fp16_optimizer_extra_s(m, device), expected, 1e-12);
  EXPECT_EQ(fp16_optimizer_extra_s({}, device), 0.0);
}

// In the step: the optimizer pays the extra, and DeepSpeed's reduce-scatter, which starts after
// the whole backward, is exposed in full (with the all-gather after the step: two shards' time).
TEST(Fp16Optimizer, TheStepPaysTheChecksAndAnUnhiddenReduceScatter) {
  const GpuSpec& gpu = test::catalog().gpu("v100-32gb");
  const Cluster cluster{{1, 8}, &gpu};
  const DeviceModel device(gpu, Precision::kFp16, /*free_lunch=*/false);
  WorkloadSummary w;
  w.forward_s = 0.1;
  w.backward_s = 0.2;
  w.param_tensors = 774;
  w.layers = 48;
  const MethodSet zero1{.sharding = Sharding::kZero1};
  TimeModelOptions torch;
  torch.half_precision_model = true;
  TimeModelOptions deepspeed = torch;
  deepspeed.fp16_optimizer = Fp16Optimizer::kDeepSpeedZero1_2020;
  const double params = 1.5e9;
  const TimeBreakdown a =
      predict_step_time(params, Precision::kFp16, zero1, cluster, 1, w, device, torch);
  const TimeBreakdown b =
      predict_step_time(params, Precision::kFp16, zero1, cluster, 1, w, device, deepspeed);
  const Fp16OptimizerExtra extra =
      fp16_optimizer_extra(Fp16Optimizer::kDeepSpeedZero1_2020, params, 774, 48, 2.0, 8);
  EXPECT_NEAR(b.optimizer_s - a.optimizer_s, fp16_optimizer_extra_s(extra, device), 1e-12);
  const double shard_s =
      7.0 / 8.0 * params * 2.0 / collective_bandwidth_bytes_per_s(cluster, deepspeed);
  EXPECT_NEAR(b.communication_s, 2.0 * shard_s, 1e-12);
  EXPECT_LT(a.communication_s, b.communication_s);
  EXPECT_DOUBLE_EQ(a.compute_s, b.compute_s);
}

}  // namespace
}  // namespace gpudays
