// Host memory of offloaded optimizer state: ZeRO-Offload's 16 bytes per parameter (18 with the
// stage-3 weight shards, as DeepSpeed's estimator counts), the default per node, and offloading
// configurations that need more host memory than the node has are infeasible with the reason.
#include <gtest/gtest.h>

#include "common/units.h"
#include "plan/memory_model.h"
#include "plan/planner.h"
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

}  // namespace
}  // namespace gpudays
