// What the host CPU pays differently from a GPU (plan/device_model.h): dispatch on the thread that
// runs the operation (added, not overlapped), and the slow backward of a depthwise convolution;
// the plain selective scan's per-step kernels, which make the CPU's dispatch count; and
// free-lunch's scan, the fused kernel on the CPU but the chunked ATen scan on a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "catalog/host_cpu.h"
#include "plan/device_model.h"
#include "plan/planner.h"
#include "plan/workload.h"
#include "plan/workload_summary.h"
#include "test_util.h"

namespace gpudays {
namespace {

GpuSpec cpu() {
  return host_cpu_spec({"test cpu", 2, 0.1, 0.3, 25.0, int64_t{1} << 50}, {.ranks = 1});
}

GpuSpec as_gpu(GpuSpec spec) {
  spec.kind = DeviceKind::kGpu;
  spec.name = "as-gpu";
  spec.compute_capability = 8.0;
  return spec;
}

// On the CPU the dispatch of each kernel adds to its run time; on a GPU the host's launches are
// their own time (op_host_s), which the workload's queue overlaps with the kernels.
TEST(HostCpuOps, DispatchAddsOnTheCpuAndOverlapsOnAGpu) {
  Op op = make_memory("elementwise",
                      /*elements_moved=*/3e6,
                      /*elt=*/4.0,
                      /*saved_bytes=*/0.0,
                      /*kernels=*/400.0);
  for (const GpuSpec& spec : {cpu(), as_gpu(cpu())}) {
    const DeviceModel device(spec, Precision::kFp32, /*free_lunch=*/false);
    const double memory_s = op.bytes / device.bandwidth_bytes_per_s();
    const double dispatch_s = op.kernels * device.dispatch_s();
    ASSERT_GT(memory_s, 0.0);
    ASSERT_GT(dispatch_s, 0.0);
    const bool on_cpu = spec.kind == DeviceKind::kCpu;
    const double expected_s = on_cpu ? memory_s + dispatch_s : memory_s;
    const double host_s = on_cpu ? 0.0 : dispatch_s;
    EXPECT_NEAR(device.op_time_s(op, /*backward=*/false), expected_s, 1e-12) << spec.name;
    EXPECT_NEAR(device.op_time_s(op, /*backward=*/true), 2.0 * expected_s, 1e-12) << spec.name;
    for (bool python : {false, true}) {
      const double forward_host_s = on_cpu ? 0.0 : op.kernels * device.host_dispatch_s(python);
      EXPECT_NEAR(device.op_host_s(op, /*backward=*/false, python), forward_host_s, 1e-12);
      EXPECT_NEAR(device.op_host_s(op, /*backward=*/true, python), 2.0 * host_s, 1e-12);
    }
  }
}

// On a GPU a memory-bound kernel also costs a fixed time of its own beyond its bytes (launch
// latency, ramp and tail), per kernel and per backward kernel; GEMMs and the host CPU do not.
TEST(HostCpuOps, AGpuMemoryKernelCostsItsBytesAndAFixedTime) {
  DeviceModelConstants c;
  c.kernel_overhead_s = 4e-6;
  const Op pointwise = make_memory("pointwise", 1e6, 2.0, 0.0, /*kernels=*/3.0);
  const Op gemm = make_matmul("gemm", 4096, 4096, 4096, 2.0);
  const DeviceModel gpu(test::catalog().gpu("a100-80gb-sxm"), Precision::kBf16, false, c);
  const DeviceModel plain(test::catalog().gpu("a100-80gb-sxm"), Precision::kBf16, false);
  const double bytes_s = pointwise.bytes / gpu.bandwidth_bytes_per_s();
  EXPECT_NEAR(gpu.op_time_s(pointwise, false), bytes_s + 3.0 * 4e-6, 1e-15);
  EXPECT_NEAR(gpu.op_time_s(pointwise, true), 2.0 * (bytes_s + 3.0 * 4e-6), 1e-15);
  EXPECT_DOUBLE_EQ(gpu.op_time_s(gemm, false), plain.op_time_s(gemm, false));
  const DeviceModel host(cpu(), Precision::kFp32, false, c);
  const DeviceModel host_plain(cpu(), Precision::kFp32, false);
  EXPECT_DOUBLE_EQ(host.op_time_s(pointwise, false), host_plain.op_time_s(pointwise, false));
}

// A GPU's run of kernels takes the slower of its kernels and the host's launches: launches hide
// under large GEMMs, and small kernels wait for their launches. Python model code launches its
// forward slower than C++; autograd's backward is C++ either way.
TEST(HostCpuOps, TheHostQueuesKernelsAheadOfTheGpu) {
  const DeviceModel gpu(test::catalog().gpu("a100-80gb-sxm"), Precision::kBf16, false);
  ASSERT_GT(gpu.host_dispatch_s(/*python=*/true), gpu.host_dispatch_s(/*python=*/false));
  const Op gemm = make_matmul("gemm", 8192, 8192, 8192, /*elt=*/2.0);
  const Op tiny = make_memory("pointwise", /*elements_moved=*/1e3, /*elt=*/2.0, 0.0, 4.0);
  for (bool python : {false, true}) {
    Workload w;
    w.samples = 1;
    w.python_forward = python;
    w.stem_ops = {gemm, tiny, tiny};
    w.head_ops = {tiny, tiny};
    const WorkloadSummary s = summarize(w, gpu);
    for (bool backward : {false, true}) {
      const double host_tiny_s = gpu.op_host_s(tiny, backward, python);
      ASSERT_GT(gpu.op_time_s(gemm, backward),
                2.0 * host_tiny_s + gpu.op_host_s(gemm, backward, python));
      ASSERT_GT(host_tiny_s, gpu.op_time_s(tiny, backward));
      // The stem's launches hide under its GEMM; the head's small kernels wait for theirs.
      const double expected_s =
          gpu.op_time_s(gemm, backward) + 2.0 * gpu.op_time_s(tiny, backward) + 2.0 * host_tiny_s;
      EXPECT_NEAR(backward ? s.backward_s : s.forward_s, expected_s, 1e-12);
    }
  }
}

// A batched matmul is one BLAS call per GEMM on the host CPU, so it costs its GEMMs one by one;
// on a GPU it is one kernel, and a batch of tiny GEMMs costs far less than launching each.
TEST(HostCpuOps, ABatchedMatmulIsOneCallPerGemmOnTheCpu) {
  const Op one = make_matmul("gemm", 16, 16, 16, /*elt=*/4.0);
  const Op many = make_matmul("bmm", 16, 16, 16, /*elt=*/4.0, /*batch=*/128.0);
  for (bool backward : {false, true}) {
    const DeviceModel host(cpu(), Precision::kFp32, /*free_lunch=*/false);
    EXPECT_NEAR(host.op_time_s(many, backward), 128.0 * host.op_time_s(one, backward), 1e-12);
    EXPECT_GT(host.op_time_s(one, backward), host.dispatch_s()) << "a call costs its dispatch";
    const DeviceModel gpu(test::catalog().gpu("a100-80gb-sxm"), Precision::kBf16, false);
    const auto gpu_s = [&](const Op& op) {
      return gpu.op_time_s(op, backward) + gpu.op_host_s(op, backward, /*python_forward=*/false);
    };
    EXPECT_LT(gpu_s(many), 128.0 * gpu_s(one) / 10.0);
  }
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

// The plain scan is the discretisation over [b, e, T, N] and T steps of small kernels, the readout
// one BLAS call per batch element (workload_mamba.cpp); the fused scan is one kernel. The split
// keeps what autograd saves: dA, dBu, every step's state and delta.
const Op* find(const std::vector<Op>& ops, const std::string& name) {
  const auto it = std::find_if(
      ops.begin(), ops.end(), [&](const Op& op) { return std::string(op.name) == name; });
  return it == ops.end() ? nullptr : &*it;
}

TEST(HostCpuOps, ThePlainScanIsTStepsOfSmallKernels) {
  const ModelSpec& model = test::catalog().model("mamba");
  const auto& a = model.arch;
  const double b = 4.0;
  const double t = static_cast<double>(a.seq_len);
  const double e = static_cast<double>(a.expand * a.d_model);
  const double elements = b * t * e * static_cast<double>(a.d_state);
  WorkloadOptions options;
  options.device_kind = DeviceKind::kCpu;
  options.micro_batch_size = 4;
  options.fast_scan = false;
  const Workload plain = build_workload(model, options);
  const auto& ops = plain.blocks.at(0).ops;
  const Op* discretise = find(ops, "selective_scan_discretise");
  const Op* update = find(ops, "selective_scan_update");
  const Op* readout = find(ops, "selective_scan_readout");
  ASSERT_TRUE(discretise && update && readout);
  EXPECT_EQ(find(ops, "selective_scan_fused"), nullptr);
  EXPECT_DOUBLE_EQ(update->kernels, 2.0 * t);
  EXPECT_DOUBLE_EQ(readout->kernels, t);  // one batched kernel per step on a GPU ...
  EXPECT_DOUBLE_EQ(readout->batch, b);    // ... and one BLAS call per batch element on the CPU
  EXPECT_DOUBLE_EQ(discretise->bytes, 6.0 * elements * 4.0);
  EXPECT_DOUBLE_EQ(discretise->saved_bytes + update->saved_bytes + readout->saved_bytes,
                   (3.0 * elements + b * t * e) * 4.0);
  EXPECT_DOUBLE_EQ(discretise->model_flops, 9.0 * elements);

  options.fast_scan = true;
  const Workload fused = build_workload(model, options);
  const auto& fused_ops = fused.blocks.at(0).ops;
  ASSERT_NE(find(fused_ops, "selective_scan_fused"), nullptr);
  EXPECT_EQ(find(fused_ops, "selective_scan_update"), nullptr);
  EXPECT_EQ(find(fused_ops, "selective_scan_fused")->kernels, 1.0);
  // The same model FLOPs either way (MFU does not depend on the implementation).
  EXPECT_DOUBLE_EQ(sum_model_flops(ops), sum_model_flops(fused_ops));
}

// On a GPU free-lunch's scan is the chunked ATen scan (models/selective_scan_chunked.cpp): mamba's
// 4096 tokens in 64 chunks of 64, passes over fp32 [b, T, e, N] tensors (11 + 4 forward, 22 + 8
// backward, three held at once in backward, one state per chunk saved), 63 + 63 dependent steps
// (the in-chunk ones twice in backward). No fused GPU kernel is planned.
TEST(HostCpuOps, AGpuRunsTheChunkedScan) {
  const ModelSpec& model = test::catalog().model("mamba");
  const auto& a = model.arch;
  ASSERT_EQ(a.seq_len, 4096);
  const double b = 2.0;
  const double n = b * 4096.0;
  const double e = static_cast<double>(a.expand * a.d_model);
  const double state = static_cast<double>(a.d_state);
  const double elements = n * e * state;
  WorkloadOptions options;
  options.micro_batch_size = 2;
  options.fast_scan = true;
  ASSERT_EQ(options.device_kind, DeviceKind::kGpu);  // the default
  const Workload w = build_workload(model, options);
  const auto& ops = w.blocks.at(0).ops;
  const Op* bulk = find(ops, "selective_scan_chunked");
  const Op* steps = find(ops, "selective_scan_chunked_steps");
  ASSERT_TRUE(bulk && steps);
  EXPECT_EQ(find(ops, "selective_scan_fused"), nullptr);
  EXPECT_EQ(find(ops, "selective_scan_update"), nullptr);
  EXPECT_DOUBLE_EQ(bulk->bytes, 11.0 * elements * 4.0);
  EXPECT_DOUBLE_EQ(bulk->bytes * bulk->backward_factor, 22.0 * elements * 4.0);
  EXPECT_DOUBLE_EQ(bulk->transient_bytes, 3.0 * elements * 4.0);
  // delta, B and C in fp32, and one [b, e, N] state per chunk.
  EXPECT_DOUBLE_EQ(bulk->saved_bytes, (n * e + 2.0 * n * state + 64.0 * b * e * state) * 4.0);
  EXPECT_DOUBLE_EQ(steps->kernels, 63.0 + 63.0);
  const double in_chunks = 4.0 * elements * 4.0 * 63.0 / 64.0;
  const double across = 4.0 * elements * 4.0 * 63.0 / 4096.0;
  EXPECT_NEAR(steps->bytes, in_chunks + across, 1e-9 * steps->bytes);
  EXPECT_NEAR(steps->bytes * steps->backward_factor, 2.0 * in_chunks + across, 1e-9 * steps->bytes);
  options.device_kind = DeviceKind::kCpu;
  const Workload on_cpu = build_workload(model, options);
  ASSERT_NE(find(on_cpu.blocks.at(0).ops, "selective_scan_fused"), nullptr);
  EXPECT_DOUBLE_EQ(sum_model_flops(ops), sum_model_flops(on_cpu.blocks.at(0).ops));
  // On an A100 the scan is bound by memory bandwidth, not by its kernel launches.
  const DeviceModel a100(
      test::catalog().gpu("a100-80gb-sxm"), Precision::kBf16, /*free_lunch=*/true);
  EXPECT_DOUBLE_EQ(a100.op_time_s(*bulk, /*backward=*/false),
                   bulk->bytes / a100.bandwidth_bytes_per_s());
}

// The planner tells the workload its device's kind: a free-lunch step of a (shortened, fp32:
// no autocast traffic) Mamba computes for exactly the time of the workload built for that kind,
// the chunked scan on the A100, the fused kernel on the host CPU, and the two differ.
TEST(HostCpuOps, ThePlannerPlansTheScanOfTheDevice) {
  ModelSpec model = test::catalog().model("mamba");
  model.arch.n_layers = 2;
  model.arch.seq_len = 256;
  model.recipe.precision = Precision::kFp32;
  model.recipe.global_batch = 2;
  const Configuration config{MethodSet{/*free_lunch=*/true}, /*micro_batch_size=*/2, 1};
  for (const GpuSpec& spec : {test::catalog().gpu("a100-80gb-sxm"), cpu()}) {
    const PlanRow row = plan_configuration(model, Cluster{{1, 1}, &spec}, config, PlanOptions{});
    const DeviceModel device(spec, Precision::kFp32, /*free_lunch=*/true);
    auto compute_s = [&](DeviceKind kind) {
      const WorkloadOptions options{.micro_batch_size = 2,
                                    .activation_bytes = 4.0,
                                    .fused_attention = true,
                                    .fast_scan = true,
                                    .implementation = {},
                                    .device_kind = kind};
      const WorkloadSummary s = summarize(build_workload(model, options), device);
      return s.forward_s + s.backward_s;
    };
    const DeviceKind other = spec.kind == DeviceKind::kCpu ? DeviceKind::kGpu : DeviceKind::kCpu;
    EXPECT_DOUBLE_EQ(row.time.compute_s, compute_s(spec.kind)) << spec.name;
    EXPECT_GT(std::abs(row.time.compute_s - compute_s(other)), 1e-3 * row.time.compute_s)
        << spec.name;
  }
}

}  // namespace
}  // namespace gpudays
