// The reference search space's validity rules.
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "search_space/search_space.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

std::string request_error(const char* model, const char* gpu, int64_t gpus, int64_t nodes = 1) {
  try {
    check_request(catalog().model(model), Cluster{{nodes, gpus}, &catalog().gpu(gpu)});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SearchSpace, BatchMustSplitIntoPowerOfTwoPerGpu) {
  EXPECT_EQ(request_error("pythia-1b", "a100", 4), "");
  EXPECT_NE(request_error("pythia-1b", "a100", 3).find("power-of-two per-GPU batch over 3 GPUs"),
            std::string::npos);
  EXPECT_NE(request_error("mamba", "a100", 8, 32).find("over 256 GPUs"), std::string::npos);
}

TEST(SearchSpace, Bf16NeedsAmpereOrNewer) {
  EXPECT_NE(request_error("pythia-1b", "v100", 1).find("bf16"), std::string::npos);
  EXPECT_EQ(request_error("pythia-1b", "rtx-3090", 1), "");
  EXPECT_EQ(request_error("pythia-410m", "v100", 1), "");  // fp16 recipe
}

// The one bf16 rule the planner and the engine share: compute capability 8.0 or newer; a CPU
// (capability 0) runs bf16 autocast.
TEST(SearchSpace, PrecisionRuleByComputeCapability) {
  EXPECT_NE(precision_problem(Precision::kBf16, "V100", 7.0).find("V100 has 7.0"),
            std::string::npos);
  EXPECT_EQ(precision_problem(Precision::kBf16, "A100", 8.0), "");
  EXPECT_EQ(precision_problem(Precision::kBf16, "host CPU", 0.0), "");
  EXPECT_EQ(precision_problem(Precision::kFp16, "V100", 7.0), "");
  EXPECT_EQ(precision_problem(Precision::kFp32, "T4", 7.5), "");
}

// Value equality: every field counts.
TEST(SearchSpace, ConfigurationsCompareByValue) {
  const Configuration base{{true, false, Sharding::kZero2, true}, 8, 4};
  EXPECT_EQ(base, (Configuration{{true, false, Sharding::kZero2, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{false, false, Sharding::kZero2, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, true, Sharding::kZero2, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kFsdpShardGradOp, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kZero2, false}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kZero2, true}, 16, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kZero2, true}, 8, 2}));
  EXPECT_EQ(describe(base), "free-lunch + zero_2 + offload, micro-batch 8, accumulation 4");
}

TEST(SearchSpace, ImpossibleCounts) {
  EXPECT_NE(request_error("pythia-1b", "a100", 0).find("GPUs per node"), std::string::npos);
  EXPECT_NE(request_error("pythia-1b", "a100", 1, 0).find("nodes must be"), std::string::npos);
}

TEST(SearchSpace, OffloadingNeedsShardingAndOneGpuShardsOnlyWithOffload) {
  const Cluster one{{1, 1}, &catalog().gpu("a100")};
  const Cluster four{{1, 4}, &catalog().gpu("a100")};
  EXPECT_NE(method_set_problem({false, false, Sharding::kNone, true}, 4), "");
  EXPECT_NE(method_set_problem({false, false, Sharding::kZero2, false}, 1), "");
  EXPECT_EQ(method_set_problem({false, false, Sharding::kZero2, true}, 1), "");
  EXPECT_EQ(method_set_problem({false, false, Sharding::kZero2, false}, 4), "");
  for (const MethodSet& m : enumerate_method_sets(MethodPreset::kAll, one)) {
    EXPECT_EQ(method_set_problem(m, one.world_size()), "");
  }
  for (const MethodSet& m : enumerate_method_sets(MethodPreset::kAll, four)) {
    EXPECT_EQ(method_set_problem(m, four.world_size()), "");
  }
}

TEST(SearchSpace, PresetSizes) {
  const Cluster one{{1, 1}, &catalog().gpu("a100")};
  const Cluster four{{1, 4}, &catalog().gpu("a100")};
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kNaive, four).size(), 1u);
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kFreeLunch, four).size(), 1u);
  // 2 free-lunch x 2 checkpointing x (none + 5 shardings x {off, on} offload) = 44.
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kAll, four).size(), 44u);
  // One GPU: 2 x 2 x (none + 5 shardings with offload) = 24.
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kAll, one).size(), 24u);
}

TEST(SearchSpace, MicroBatchesArePowersOfTwoUpToThePerGpuBatch) {
  const Cluster four{{1, 4}, &catalog().gpu("a100")};
  const auto configs =
      enumerate_configs(catalog().model("pythia-1b"), four, MethodPreset::kFreeLunch);
  std::set<int64_t> micro;
  for (const Configuration& c : configs) {
    EXPECT_EQ(c.micro_batch_size * c.grad_acc_steps, 256);
    micro.insert(c.micro_batch_size);
  }
  EXPECT_EQ(micro, (std::set<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
}

}  // namespace
}  // namespace gpudays
