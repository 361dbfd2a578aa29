// Host memory of offloaded optimizer state: ZeRO-Offload's 16 bytes per parameter (18 with the
// stage-3 weight shards, as DeepSpeed's estimator counts), the default per node, and offloading
// configurations that need more host memory than the node has are infeasible with the reason.
#include <gtest/gtest.h>

#include "common/units.h"
#include "plan/memory_model.h"
#include "plan/planner.h"
#include "plan/time_model.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

TEST(HostMemory, OffloadedStateBytesPerParameter) {
  const double params = 7.5e9;
  const MemoryBreakdown stage2 =
      model_state_memory(params, Precision::kFp16, Sharding::kZero2, /*offloading=*/true, 64);
  EXPECT_DOUBLE_EQ(stage2.host_bytes, 16.0 * params / 64);
  const MemoryBreakdown stage3 =
      model_state_memory(params, Precision::kBf16, Sharding::kZero3, /*offloading=*/true, 64);
  EXPECT_DOUBLE_EQ(stage3.host_bytes, 18.0 * params / 64);
  EXPECT_EQ(model_state_memory(params, Precision::kFp16, Sharding::kZero2, false, 64).host_bytes,
            0.0);
}

TEST(HostMemory, DefaultIsTwiceTheNodesGpuMemoryAtLeast64GiB) {
  const Cluster one_3090{{1, 1}, &catalog().gpu("rtx-3090")};
  EXPECT_DOUBLE_EQ(default_host_memory_bytes(one_3090), 64.0 * kGiB);
  const Cluster dgx{{2, 8}, &catalog().gpu("a100-80gb-sxm")};
  EXPECT_DOUBLE_EQ(default_host_memory_bytes(dgx),
                   2.0 * 8 * static_cast<double>(catalog().gpu("a100-80gb-sxm").memory_bytes));
}

// pythia-12b on one RTX 3090 fits in GPU memory only by offloading ~200 GB.
TEST(HostMemory, OffloadingBeyondTheHostIsInfeasible) {
  const ModelSpec& model = catalog().model("pythia-12b");
  const Cluster cluster{{1, 1}, &catalog().gpu("rtx-3090")};
  const PlanResult by_default = plan(model, cluster, PlanOptions{});
  EXPECT_FALSE(by_default.best.has_value());
  EXPECT_TRUE(by_default.host_memory_is_default);
  int host_limited = 0;
  for (const PlanRow& r : by_default.rows) {
    if (r.reason.find("host memory") != std::string::npos) {
      ++host_limited;
      EXPECT_GT(r.memory.host_bytes, by_default.host_memory_bytes_per_node);
    }
  }
  EXPECT_GT(host_limited, 0);
  EXPECT_NE(nothing_fits_reason(by_default, *cluster.gpu).find("host memory per node"),
            std::string::npos);
  PlanOptions large_host;
  large_host.host_memory_bytes_per_node = 256.0 * kGiB;
  const PlanResult with_host = plan(model, cluster, large_host);
  ASSERT_TRUE(with_host.best.has_value());
  EXPECT_TRUE(with_host.best->config.methods.offloading);
  EXPECT_LE(with_host.best->memory.host_bytes, 256.0 * kGiB);
}

// DeepSpeed's cpu_checkpointing: the checkpointed blocks' inputs move from the GPU to host memory
// (the block being recomputed gets its input back), and each micro-step copies them to the host
// and back over the host link, the stream waiting for each copy.
TEST(HostMemory, CheckpointInputsOnTheHostLeaveTheGpuAndCrossTheLinkTwice) {
  const GpuSpec& gpu = catalog().gpu("v100-32gb");
  const Cluster cluster{{1, 1}, &gpu};
  WorkloadSummary w;
  w.forward_s = 1.0;
  w.backward_s = 2.0;
  w.recompute_s = 1.0;
  w.checkpointed_block_bytes = 5.0e9;
  w.checkpointed_input_bytes = 4.0e9;
  w.max_block_input_bytes = 0.1e9;
  w.max_block_saved_bytes = 1.0e9;
  const MethodSet ckpt{.activation_checkpointing = true};
  MemoryModelConstants on_host;
  on_host.checkpoint_inputs_on_host = true;
  const MemoryBreakdown gpu_kept = predict_memory(1e9, Precision::kFp16, ckpt, cluster, w, {});
  const MemoryBreakdown host_kept =
      predict_memory(1e9, Precision::kFp16, ckpt, cluster, w, on_host);
  EXPECT_DOUBLE_EQ(gpu_kept.activations_bytes - host_kept.activations_bytes, 3.9e9);
  EXPECT_DOUBLE_EQ(host_kept.host_bytes - gpu_kept.host_bytes, 4.0e9);
  const MethodSet plain{};
  EXPECT_DOUBLE_EQ(predict_memory(1e9, Precision::kFp16, plain, cluster, w, on_host).host_bytes,
                   0.0);  // nothing is checkpointed

  const DeviceModel device(gpu, Precision::kFp16, /*free_lunch=*/false);
  TimeModelOptions copies;
  copies.checkpoint_inputs_on_host = true;
  const double link = gpu.host_link_gb_per_s * kGB * copies.host_link_efficiency;
  const auto offload_s = [&](const TimeModelOptions& o) {
    return predict_step_time(1e9, Precision::kFp16, ckpt, cluster, 3, w, device, o).offload_s;
  };
  EXPECT_NEAR(offload_s(copies) - offload_s({}), 3 * 2.0 * 4.0e9 / link, 1e-9);
}

}  // namespace
}  // namespace gpudays
