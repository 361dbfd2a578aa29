// The planner on the host CPU: its memory has no CUDA context, NCCL buffers or cuBLAS workspace;
// it dispatches eagerly (no CUDA graphs); small GEMMs run near its measured ceiling; it runs bf16,
// refuses fp16 (not measured), and never predicts executed FLOPs above its ceiling, whatever the
// model, precision, ranks or calibration.
#include <gtest/gtest.h>

#include <sstream>

#include "catalog/host_cpu.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/planner.h"
#include "rows/plan_rows.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

GpuSpec cpu(double fp32_tflops, double bf16_tflops, int64_t ranks = 1) {
  return host_cpu_spec({"test cpu", 2, fp32_tflops, bf16_tflops, 25.0, int64_t{1} << 50},
                       {.ranks = ranks});
}

// The same figures, described as a GPU of compute capability 8.0.
GpuSpec as_gpu(GpuSpec spec) {
  spec.kind = DeviceKind::kGpu;
  spec.name = "as-gpu";
  spec.compute_capability = 8.0;
  return spec;
}

ModelSpec with_precision(ModelSpec model, Precision precision) {
  model.recipe.precision = precision;
  return model;
}

TEST(HostCpuPlan, NoCudaContextNcclBuffersOrCublasWorkspace) {
  const ModelSpec& model = catalog().model("pythia-1b");
  const MemoryModelConstants c;
  for (int64_t ranks : {1, 2}) {
    const GpuSpec host = cpu(0.1, 0.3, ranks);
    const GpuSpec gpu = as_gpu(host);
    const PlanResult on_cpu = plan(model, Cluster{{1, ranks}, &host}, {});
    const PlanResult on_gpu = plan(model, Cluster{{1, ranks}, &gpu}, {});
    ASSERT_EQ(on_cpu.rows.size(), on_gpu.rows.size());
    for (size_t i = 0; i < on_cpu.rows.size(); ++i) {
      const MemoryBreakdown& m = on_cpu.rows[i].memory;
      const MemoryBreakdown& g = on_gpu.rows[i].memory;
      EXPECT_DOUBLE_EQ(m.temporary_bytes, g.temporary_bytes - c.cublas_workspace_bytes);
      EXPECT_EQ(m.framework_bytes, 0.0) << "no CUDA context or NCCL buffers";
      // No caching allocator on the host: the split blocks' share, never the GPU's usual slack.
      EXPECT_NEAR(m.fragmentation_bytes, c.fragmentation_at_limit * m.allocated_bytes(), 1.0)
          << "the allocator's slack, its own term";
      EXPECT_FALSE(m.allocator_at_limit);
      const double cuda = c.cuda_context_bytes + (ranks > 1 ? c.communicator_bytes : 0.0);
      EXPECT_NEAR(g.framework_bytes, cuda, 1.0);
      // The GPU's free-lunch rows capture CUDA graphs, whose gradients stay between steps; the
      // host frees them (engine_frees_gradients), so its one-micro-step rows hold fewer there and
      // only there.
      const double gradients = g.gradients_bytes - m.gradients_bytes;
      const Configuration& config = on_cpu.rows[i].config;
      if (cuda_graphs_apply(config.methods, Cluster{{1, ranks}, &gpu}) &&
          config.grad_acc_steps == 1) {
        EXPECT_GT(gradients, 0.0) << describe(config);
      } else {
        EXPECT_EQ(gradients, 0.0) << describe(config);
      }
      EXPECT_NEAR(g.fragmentation_floor_bytes - m.fragmentation_floor_bytes,
                  c.fragmentation_at_limit * (c.cublas_workspace_bytes + gradients),
                  1.0);
    }
  }
}

// plan's one-layer line says what its time is on each device: a GPU's kernels alone, or the host
// CPU's operations with their dispatch (which the CPU runs on the same thread).
TEST(HostCpuPlan, OneLayerLineSaysWhatItTimes) {
  const ModelSpec& model = catalog().model("pythia-14m");
  for (const bool on_cpu : {true, false}) {
    const GpuSpec spec = on_cpu ? cpu(0.1, 0.3) : as_gpu(cpu(0.1, 0.3));
    const PlanResult result = plan(with_precision(model, Precision::kBf16), {{1, 1}, &spec}, {});
    ASSERT_TRUE(result.best.has_value());
    std::ostringstream out;
    print_plan_summary(out, model, spec, result, {}, {});
    const std::string text = out.str();
    EXPECT_NE(text.find(on_cpu ? "the CPU's operations and their dispatch (what timing one on this "
                                 "CPU checks)"
                               : "the GPU's kernels alone (what timing one on the GPU checks)"),
              std::string::npos)
        << text;
  }
}

TEST(HostCpuPlan, NoCudaGraphsOnTheCpu) {
  const GpuSpec host = cpu(0.1, 0.3);
  const DeviceModelConstants c;
  EXPECT_EQ(DeviceModel(host, Precision::kFp32, /*free_lunch=*/true).dispatch_s(),
            c.eager_dispatch_s);
  EXPECT_EQ(DeviceModel(as_gpu(host), Precision::kFp32, /*free_lunch=*/true).dispatch_s(),
            c.graph_dispatch_s);
}

// bench-gpt-neox's MLP GEMM, [4096 x 128] x [128 x 512]: near the CPU's measured ceiling (0.96-0.98
// measured on the development machine), far below it for a GPU's tiles.
TEST(HostCpuPlan, SmallGemmsRunNearTheMeasuredCeiling) {
  const GpuSpec host = cpu(0.1, 0.3);
  Op gemm;
  gemm.cls = OpClass::kMatmul;
  gemm.m = 4096;
  gemm.n = 512;
  gemm.k = 128;
  gemm.exec_flops = gemm.model_flops = 2.0 * gemm.m * gemm.n * gemm.k;
  const auto fraction = [&](const GpuSpec& spec) {
    const DeviceModel device(spec, Precision::kFp32, /*free_lunch=*/false);
    return gemm.exec_flops / device.op_time_s(gemm, /*backward=*/false) / device.ceiling_flops();
  };
  EXPECT_GT(fraction(host), 0.95);
  EXPECT_LT(fraction(as_gpu(host)), 0.5);
}

TEST(HostCpuPlan, Bf16RunsAndFp16IsRefused) {
  const GpuSpec host = cpu(0.1, 0.3);
  const ModelSpec& model = catalog().model("pythia-70m");
  EXPECT_TRUE(plan(with_precision(model, Precision::kBf16), Cluster{{1, 1}, &host}, {}).best);
  try {
    plan(with_precision(model, Precision::kFp16), Cluster{{1, 1}, &host}, {});
    FAIL() << "fp16 planned on the host CPU";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("use bf16 or fp32"), std::string::npos) << e.what();
  }
  const GpuSpec no_bf16 = cpu(0.1, 0.0);
  EXPECT_THROW(plan(with_precision(model, Precision::kBf16), Cluster{{1, 1}, &no_bf16}, {}),
               InputError);
}

// Every catalog model in fp32 and bf16, on CPUs whose bf16 is far faster or far slower than fp32,
// on one and two ranks, uncalibrated and calibrated to a hundredth: plan() aborts on a row whose
// executed FLOPs pass the ceiling (the measured matmul throughput), and none does.
TEST(HostCpuPlan, NeverAboveItsMeasuredCeiling) {
  int rows = 0;
  for (const auto& [fp32, bf16] : {std::pair{0.09, 0.5}, std::pair{0.1, 0.005}}) {
    for (int64_t ranks : {1, 2}) {
      const GpuSpec host = cpu(fp32, bf16, ranks);
      for (const ModelSpec& model : catalog().models()) {
        for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
          for (double factor : {1.0, 0.01}) {
            PlanOptions options;
            options.calibration = {factor, factor == 1.0 ? 0 : 1};
            const PlanResult result =
                plan(with_precision(model, precision), Cluster{{1, ranks}, &host}, options);
            for (const PlanRow& row : result.rows) {
              EXPECT_LE(row.executed_utilisation, 1.0 + 1e-9)
                  << model.name << " " << to_string(precision);
              ++rows;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(rows, 10000);
}

}  // namespace
}  // namespace gpudays
