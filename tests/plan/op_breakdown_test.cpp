// `plan --ops` (plan/op_breakdown.h): the per-operation times of a micro-step are the planner's
// own, so one repeated block's sum is the layer time the planner reports, and the listing reads
// as a user expects: the largest first, memory-bound kernels marked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "plan/device_model.h"
#include "plan/op_breakdown.h"
#include "plan/workload.h"
#include "plan/workload_summary.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

constexpr int64_t kMicroBatch = 8;

WorkloadSummary summary(const ModelSpec& model, const GpuSpec& gpu, bool free_lunch) {
  WorkloadOptions o;
  o.micro_batch_size = kMicroBatch;
  o.activation_bytes = 2.0;
  o.fused_attention = free_lunch;
  o.fast_scan = free_lunch;
  return summarize(build_workload(model, o),
                   DeviceModel(gpu, model.recipe.precision, free_lunch, PlanOptions{}.device));
}

// An op's buffers (its transient bytes and its saved group's gradient) meet only the activations
// of its block's earlier ops: what the later ops keep is not yet made in forward and already
// freed in backward. The stem's are counted whole.
TEST(WorkloadSummary, OpBuffersLessWhatTheLaterOpsOfTheirBlockKeep) {
  Workload w;
  Block block;
  block.count = 3;
  const auto op = [](const char* name, double saved, double transient) {
    Op o = make_memory(name, 1.0, 1.0, saved);
    o.transient_bytes = transient;
    return o;
  };
  block.ops = {op("first", 10.0, 0.0), op("scores", 5.0, 20.0), op("later", 7.0, 0.0)};
  w.blocks.push_back(block);
  const DeviceModel device(catalog().gpu("a100"), Precision::kBf16, false, PlanOptions{}.device);
  // first: 10 - (5 + 7) < 0; scores: 20 + 5 - 7 = 18; later: 7.
  EXPECT_DOUBLE_EQ(summarize(w, device).op_buffer_bytes, 18.0);
  w.stem_ops = {op("embed", 4.0, 16.0)};  // 20, whole
  EXPECT_DOUBLE_EQ(summarize(w, device).op_buffer_bytes, 20.0);
  EXPECT_DOUBLE_EQ(summarize(w, device).max_tensor_bytes, 10.0);
}

// One layer's operations, forward and backward, add up to the planner's layer time exactly, with
// and without free-lunch, for a transformer and for Mamba.
TEST(OpBreakdown, OneBlocksOperationsAddUpToThePlannersLayerTime) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  for (const char* name : {"pythia-1b", "mamba"}) {
    const ModelSpec& model = catalog().model(name);
    for (const bool free_lunch : {false, true}) {
      double block_s = 0.0;
      std::string block;
      for (const OpTime& op : op_breakdown(model, gpu, kMicroBatch, free_lunch, PlanOptions{})) {
        if (op.part == "stem" || op.part == "head") continue;
        block = op.part;
        block_s += (op.forward_s + op.backward_s) / static_cast<double>(op.count);
      }
      EXPECT_FALSE(block.empty()) << name;
      EXPECT_NEAR(block_s, summary(model, gpu, free_lunch).layer_device_s, 1e-9 * block_s)
          << name << (free_lunch ? " free-lunch" : " plain");
    }
  }
}

// What the listing says autograd keeps adds up to the activations the memory model plans without
// checkpointing: the stem's, every block's and the head's.
TEST(OpBreakdown, KeptBytesAddUpToThePlannedActivations) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  for (const char* name : {"pythia-1b", "roberta", "mamba"}) {
    const ModelSpec& model = catalog().model(name);
    for (const bool free_lunch : {false, true}) {
      double stem = 0.0, blocks = 0.0, head = 0.0;
      for (const OpTime& op : op_breakdown(model, gpu, kMicroBatch, free_lunch, PlanOptions{})) {
        (op.part == "stem" ? stem : op.part == "head" ? head : blocks) += op.saved_bytes;
      }
      const WorkloadSummary w = summary(model, gpu, free_lunch);
      const std::string what = std::string(name) + (free_lunch ? " free-lunch" : " plain");
      EXPECT_GT(blocks, 0.0) << what;
      EXPECT_NEAR(stem, w.stem_saved_bytes, 1e-9 * (stem + 1.0)) << what;
      EXPECT_NEAR(blocks, w.block_saved_bytes, 1e-9 * blocks) << what;
      EXPECT_NEAR(head, w.head_saved_bytes, 1e-9 * (head + 1.0)) << what;
    }
  }
}

// The largest first; elementwise kernels are memory-bound, a large GEMM is not.
TEST(OpBreakdown, LargestFirstWithMemoryBoundKernelsMarked) {
  const std::vector<OpTime> ops = op_breakdown(catalog().model("pythia-1b"),
                                               catalog().gpu("a100-80gb-sxm"),
                                               kMicroBatch,
                                               /*free_lunch=*/false,
                                               PlanOptions{});
  ASSERT_GT(ops.size(), 5u);
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) {
    return a.forward_s + a.backward_s > b.forward_s + b.backward_s;
  }));
  for (const OpTime& op : ops) {
    if (op.name == std::string("mlp_in")) {
      EXPECT_FALSE(op.memory_bound);
    }
    if (op.name == std::string("softmax")) {
      EXPECT_TRUE(op.memory_bound);
    }
    EXPECT_GE(op.forward_s, 0.0) << op.name;  // the biases' gradients run in backward only
    EXPECT_GT(op.forward_s + op.backward_s, 0.0) << op.name;
    EXPECT_GE(op.count, 1) << op.name;
  }
}

// From the command line: a table after the plan, the same list in JSON, refused for CSV.
TEST(OpBreakdown, PlanOpsPrintsTheListInTableAndJson) {
  const std::string plan = "plan --model pythia-1b --gpu a100 --gpus-per-node 4 --ops";
  const auto table = test::run_gpudays(plan);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Where a micro-step of the best configuration goes"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("mlp_in"), std::string::npos) << table.out;
  const auto json = test::run_gpudays(plan + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json ops = nlohmann::json::parse(json.out).at("ops");
  ASSERT_GT(ops.size(), 5u);
  EXPECT_GT(ops[0].at("forward_ms").get<double>(), 0.0);
  const auto csv = test::run_gpudays(plan + " --format csv");
  EXPECT_EQ(csv.exit_code, 2) << csv.err;
  EXPECT_NE(csv.err.find("--ops"), std::string::npos) << csv.err;
}

}  // namespace
}  // namespace gpudays
