// What only the host CPU pays on top of the roofline (plan/device_model.h): the first touch of
// fresh tensors past the C allocator's mmap threshold, and the slow backward of a depthwise
// convolution. A GPU pays neither; the plain selective scan and ConvNeXt's depthwise convolution
// carry what it takes for the CPU to charge them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "catalog/host_cpu.h"
#include "plan/device_model.h"
#include "plan/workload.h"
#include "test_util.h"

namespace gpudays {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

GpuSpec cpu() {
  return host_cpu_spec({"test cpu", 2, 0.1, 0.3, 25.0, int64_t{1} << 50}, {.ranks = 1});
}

GpuSpec as_gpu(GpuSpec spec) {
  spec.kind = DeviceKind::kGpu;
  spec.name = "as-gpu";
  spec.compute_capability = 8.0;
  return spec;
}

Op fresh_op(double tensor_bytes) {
  Op op = make_memory("scan", /*elements_moved=*/1e6, /*elt=*/4.0, /*saved_bytes=*/0.0);
  op.fresh_tensor_bytes = tensor_bytes;
  op.fresh_tensors_forward = 4.0;
  op.fresh_tensors_backward = 9.0;
  return op;
}

double extra_s(const GpuSpec& spec, const Op& op, bool backward) {
  Op plain = op;
  plain.fresh_tensors_forward = plain.fresh_tensors_backward = 0.0;
  const DeviceModel device(spec, Precision::kFp32, /*free_lunch=*/false);
  return device.op_time_s(op, backward) - device.op_time_s(plain, backward);
}

TEST(HostCpuOps, FreshTensorsPastTheMmapThresholdCostTheirFirstTouch) {
  const DeviceModelConstants c;
  const Op big = fresh_op(64 * kMiB);
  EXPECT_NEAR(extra_s(cpu(), big, /*backward=*/false),
              4.0 * 64 * kMiB / c.cpu_first_touch_bytes_per_s,
              1e-9);
  EXPECT_NEAR(extra_s(cpu(), big, /*backward=*/true),
              9.0 * 64 * kMiB / c.cpu_first_touch_bytes_per_s,
              1e-9);
  EXPECT_EQ(extra_s(cpu(), fresh_op(16 * kMiB), /*backward=*/false), 0.0) << "heap reuses it";
  EXPECT_EQ(extra_s(as_gpu(cpu()), big, /*backward=*/true), 0.0) << "caching allocator";
}

TEST(HostCpuOps, DepthwiseConvolutionBackwardIsSlowOnlyOnTheCpu) {
  const DeviceModelConstants c;
  Op conv = make_memory("depthwise", /*elements_moved=*/1e6, /*elt=*/4.0, /*saved_bytes=*/0.0);
  conv.model_flops = conv.exec_flops = 98.0 * 1e6;
  Op as_memory = conv;
  conv.cls = OpClass::kDepthwiseConv;
  for (const GpuSpec& spec : {cpu(), as_gpu(cpu())}) {
    const DeviceModel device(spec, Precision::kFp32, /*free_lunch=*/false);
    EXPECT_EQ(device.op_time_s(conv, /*backward=*/false),
              device.op_time_s(as_memory, /*backward=*/false));
    const double extra_s =
        device.op_time_s(conv, /*backward=*/true) - device.op_time_s(as_memory, true);
    const double slow_s =
        conv.exec_flops / (device.ceiling_flops() * c.cpu_depthwise_weight_grad_fraction) +
        conv.exec_flops / (device.ceiling_flops() * c.cpu_depthwise_input_grad_fraction);
    EXPECT_NEAR(extra_s, spec.kind == DeviceKind::kCpu ? slow_s : 0.0, 1e-12);
  }
}

// HuggingFace's slow path materialises four [b, d_inner, T, d_state] fp32 tensors in forward and
// nine in backward (workload_mamba.cpp); the fused scan none.
TEST(HostCpuOps, ThePlainScanCarriesItsFreshTensors) {
  const ModelSpec& model = test::catalog().model("mamba");
  for (bool fast : {false, true}) {
    const Workload w = build_workload(model, {.micro_batch_size = 1, .fast_scan = fast});
    const auto& ops = w.blocks.at(0).ops;
    const auto scan = std::find_if(ops.begin(), ops.end(), [](const Op& op) {
      return std::string(op.name).find("selective_scan") == 0;
    });
    ASSERT_NE(scan, ops.end());
    const auto& a = model.arch;
    const double tensor_bytes =
        4.0 * static_cast<double>(a.seq_len) * a.expand * a.d_model * a.d_state;
    EXPECT_EQ(scan->fresh_tensor_bytes, fast ? 0.0 : tensor_bytes);
    EXPECT_EQ(scan->fresh_tensors_forward, fast ? 0.0 : 4.0);
    EXPECT_EQ(scan->fresh_tensors_backward, fast ? 0.0 : 9.0);
  }
}

}  // namespace
}  // namespace gpudays
