// Planner tests against published figures: the ZeRO paper's model-state example, PaLM's FLOPs
// formula, the ConvNeXt and ViT papers' FLOPs.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "catalog/param_count.h"
#include "common/error.h"
#include "plan/input_pipeline.h"
#include "plan/memory_model.h"
#include "plan/planner.h"
#include "plan/workload.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// CUDA graphs keep the micro-step's working set in a private pool for the whole run: free-lunch
// without checkpointing or sharding, on a GPU, counts the optimizer's buffers on top of it (the
// working set's slack once, as the allocator's); elsewhere nothing.
TEST(MemoryModel, CudaGraphPoolOnlyWhereGraphsApply) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  WorkloadSummary w;
  w.block_saved_bytes = 10e9;
  w.head_saved_bytes = 1e9;
  w.op_buffer_bytes = 0.75e9;
  w.max_tensor_bytes = 0.25e9;
  const auto pool = [&](MethodSet methods, const Cluster& c) {
    return predict_memory(1e9, Precision::kBf16, methods, c, w, {}).graph_pool_bytes;
  };
  const MethodSet free_lunch{.free_lunch = true};
  const MemoryBreakdown m = predict_memory(1e9, Precision::kBf16, free_lunch, cluster, w, {});
  const MemoryBreakdown plain = predict_memory(1e9, Precision::kBf16, MethodSet{}, cluster, w, {});
  EXPECT_DOUBLE_EQ(m.graph_pool_bytes, 0.25e9);
  // The working set's slack is counted once: graphs cost the optimizer's buffers on top of it.
  EXPECT_DOUBLE_EQ(m.fragmentation_floor_bytes, plain.fragmentation_floor_bytes);
  EXPECT_NEAR(m.least_bytes() - plain.least_bytes(), 0.25e9, 1.0);
  EXPECT_NEAR(m.total_bytes() - plain.total_bytes(), 0.25e9, 1.0);
  EXPECT_EQ(pool(MethodSet{}, cluster), 0.0);
  EXPECT_EQ(pool({.free_lunch = true, .activation_checkpointing = true}, cluster), 0.0);
  EXPECT_EQ(pool({.free_lunch = true, .sharding = Sharding::kZero2}, cluster), 0.0);
  GpuSpec host = gpu;
  host.kind = DeviceKind::kCpu;  // the host CPU's stand-in: no CUDA
  EXPECT_EQ(pool(free_lunch, Cluster{{1, 1}, &host}), 0.0);
  // Other stacks' code captures no graphs: the plan of their free-lunch has no pool.
  MemoryModelConstants stack;
  stack.cuda_graphs = false;
  EXPECT_EQ(predict_memory(1e9, Precision::kBf16, free_lunch, cluster, w, stack).graph_pool_bytes,
            0.0);
}

// A workload of 10 GB of activations, for the allocator's slack.
WorkloadSummary ten_gigabytes_of_activations() {
  WorkloadSummary w;
  w.block_saved_bytes = 10e9;
  w.op_buffer_bytes = 0.75e9;
  return w;
}

// The allocator's slack grows to its usual share where the card has room; near the limit it is
// what the card leaves (the allocator frees its cache and retries), never below the split blocks'
// share, and whether a configuration fits is decided there (least_bytes).
TEST(MemoryModel, AllocatorSlackIsCappedByTheCard) {
  GpuSpec gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  const WorkloadSummary w = ten_gigabytes_of_activations();
  const MemoryModelConstants c;
  const MemoryBreakdown roomy = predict_memory(1e9, Precision::kBf16, {}, cluster, w, c);
  const double live = roomy.allocated_bytes();
  const double framework = roomy.framework_bytes;
  EXPECT_NEAR(roomy.fragmentation_bytes, c.fragmentation * live, 1.0);
  EXPECT_NEAR(roomy.least_bytes(), live * (1.0 + c.fragmentation_at_limit) + framework, 1.0);
  EXPECT_FALSE(roomy.allocator_at_limit);
  // A card with room for the live tensors and half the usual slack: the slack is what is left.
  gpu.memory_bytes = static_cast<int64_t>(live * (1.0 + c.fragmentation / 2) + framework);
  const MemoryBreakdown tight = predict_memory(1e9, Precision::kBf16, {}, cluster, w, c);
  EXPECT_TRUE(tight.allocator_at_limit);
  EXPECT_NEAR(tight.total_bytes(), static_cast<double>(gpu.memory_bytes), 1.0);
  EXPECT_GT(tight.fragmentation_bytes, c.fragmentation_at_limit * live);
  EXPECT_NEAR(tight.least_bytes(), roomy.least_bytes(), 1.0) << "the requirement is the card's";
  // Less room than the split blocks need: the floor, over the card's memory, and not "at the
  // limit" (it does not fit).
  gpu.memory_bytes = static_cast<int64_t>(live * (1.0 + c.fragmentation_at_limit / 2) + framework);
  const MemoryBreakdown over = predict_memory(1e9, Precision::kBf16, {}, cluster, w, c);
  EXPECT_NEAR(over.fragmentation_bytes, c.fragmentation_at_limit * live, 1.0);
  EXPECT_DOUBLE_EQ(over.least_bytes(), over.total_bytes());
  EXPECT_GT(over.least_bytes(), static_cast<double>(gpu.memory_bytes));
  EXPECT_FALSE(over.allocator_at_limit);
}

// The peak's range: from the slack's floor to the high end of public runs' slack, capped by the
// card like the usual share; a row that does not fit, or the host CPU, has no range.
TEST(MemoryModel, ThePeaksRangeRunsFromTheFloorToTheHighEndOfPublicSlack) {
  GpuSpec gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  const WorkloadSummary w = ten_gigabytes_of_activations();
  const MemoryModelConstants c;
  ASSERT_GT(c.fragmentation_high, c.fragmentation);
  const MemoryBreakdown roomy = predict_memory(1e9, Precision::kBf16, {}, cluster, w, c);
  const double live = roomy.allocated_bytes();
  const double framework = roomy.framework_bytes;
  EXPECT_NEAR(roomy.most_bytes(), live * (1.0 + c.fragmentation_high) + framework, 1.0);
  EXPECT_LT(roomy.least_bytes(), roomy.total_bytes());
  EXPECT_GT(roomy.most_bytes(), roomy.total_bytes());
  // Room for the usual slack but not the high end: the card caps the top of the range.
  gpu.memory_bytes = static_cast<int64_t>(live * (1.0 + c.fragmentation * 1.5) + framework);
  const MemoryBreakdown capped = predict_memory(1e9, Precision::kBf16, {}, cluster, w, c);
  EXPECT_FALSE(capped.allocator_at_limit);
  EXPECT_NEAR(capped.total_bytes(), roomy.total_bytes(), 1.0);
  EXPECT_NEAR(capped.most_bytes(), static_cast<double>(gpu.memory_bytes), 1.0);
  // Not fitting: no range.
  gpu.memory_bytes = static_cast<int64_t>(live + framework);
  const MemoryBreakdown over = predict_memory(1e9, Precision::kBf16, {}, cluster, w, c);
  EXPECT_DOUBLE_EQ(over.most_bytes(), over.least_bytes());
  // The host CPU has no caching allocator: no range either.
  GpuSpec host = catalog().gpu("a100-80gb-sxm");
  host.kind = DeviceKind::kCpu;
  const MemoryBreakdown cpu =
      predict_memory(1e9, Precision::kBf16, {}, Cluster{{1, 1}, &host}, w, c);
  EXPECT_DOUBLE_EQ(cpu.most_bytes(), cpu.least_bytes());
}

// A row fits exactly when what it needs at the least is at most the device's memory, also where
// the reservation is capped by the card and a CUDA graph pool is planned (free-lunch), on a card
// whose byte count is not round (the H200's) and on a small one, and on the host CPU, which has
// no caching allocator and keeps the split blocks' share.
TEST(MemoryModel, FitsIsDecidedOnWhatARowNeedsAtTheLeast) {
  const ModelSpec& model = catalog().model("pythia-1b");
  GpuSpec small = catalog().gpu("rtx-3090");
  GpuSpec host = catalog().gpu("a100-80gb-sxm");
  host.kind = DeviceKind::kCpu;
  const MemoryModelConstants c;
  int capped = 0;
  const GpuSpec& h200 = catalog().gpu("h200");
  for (const GpuSpec* gpu : std::vector<const GpuSpec*>{&h200, &small, &host}) {
    const PlanResult result = plan(model, Cluster{{1, 2}, gpu}, {});
    for (const PlanRow& r : result.rows) {
      const double memory = static_cast<double>(gpu->memory_bytes);
      EXPECT_EQ(r.fits, r.memory.least_bytes() <= memory) << gpu->name << " " << describe(r.config);
      if (!r.fits) {
        EXPECT_FALSE(r.memory.allocator_at_limit);
      }
      if (r.memory.allocator_at_limit) {
        ++capped;
        EXPECT_NEAR(r.memory.total_bytes(), memory, 1.0);
      }
      if (gpu->kind == DeviceKind::kCpu) {
        EXPECT_NEAR(r.memory.fragmentation_bytes,
                    c.fragmentation_at_limit * r.memory.allocated_bytes(),
                    1.0);
      }
    }
  }
  EXPECT_GT(capped, 0) << "some rows of these plans fill their card";
}

// NCCL's buffers: none on one GPU; as measured over NVLink, 544 MiB for 2 ranks and 688 MiB for
// more (NVIDIA/nccl#964), also across nodes; the PCIe assumption on cards without NVLink.
TEST(MemoryModel, NcclBuffersFollowTheLinkAndTheRanks) {
  const WorkloadSummary w;
  const MemoryModelConstants c;
  const auto framework = [&](const char* gpu, int64_t nodes, int64_t per_node) {
    const Cluster cluster{{nodes, per_node}, &catalog().gpu(gpu)};
    return predict_memory(1e9, Precision::kBf16, {}, cluster, w, c).framework_bytes -
           c.cuda_context_bytes;
  };
  const double mib = 1024.0 * 1024.0;
  EXPECT_EQ(framework("a100-80gb-sxm", 1, 1), 0.0);
  EXPECT_DOUBLE_EQ(framework("a100-80gb-sxm", 1, 2), 544.0 * mib);
  EXPECT_DOUBLE_EQ(framework("h100-sxm", 1, 8), 688.0 * mib);
  EXPECT_DOUBLE_EQ(framework("h100-sxm", 4, 8), 688.0 * mib);
  EXPECT_DOUBLE_EQ(framework("rtx-3090", 1, 8), 0.25 * 1024.0 * mib);
}

// The head's tensors are freed before any block's backward: the peak holds the larger of the
// head's phase and the blocks' backward phase (a block's buffers, and its recomputed activations
// when checkpointed), so the head adds only its excess.
TEST(MemoryModel, HeadAndBlockPhasesDoNotAdd) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  WorkloadSummary w;
  w.block_saved_bytes = 10e9;
  w.checkpointed_block_bytes = 1e9;
  w.max_block_saved_bytes = 2e9;
  w.op_buffer_bytes = 0.75e9;
  w.head_saved_bytes = 3e9;
  w.head_transient_bytes = 3e9;
  const MethodSet plain{};
  const MethodSet checkpointed{.activation_checkpointing = true};
  EXPECT_DOUBLE_EQ(predict_memory(1e9, Precision::kBf16, plain, cluster, w, {}).logits_loss_bytes,
                   6e9 - 0.75e9);
  EXPECT_DOUBLE_EQ(
      predict_memory(1e9, Precision::kBf16, checkpointed, cluster, w, {}).logits_loss_bytes,
      6e9 - 2.75e9);
  w.head_saved_bytes = 0.5e9;  // a small head: the blocks' phase is the peak
  w.head_transient_bytes = 0.5e9;
  EXPECT_EQ(predict_memory(1e9, Precision::kBf16, checkpointed, cluster, w, {}).logits_loss_bytes,
            0.0);
}

// With no gradient as the forward runs (gradients_allocated_in_backward), backward allocates each
// block's gradients as it frees that block's activations: the peak counts max(first, G - (A - one
// block)) of the G gradient bytes, the first being those outside the blocks and one block's.
// 1e9 parameters in bf16 under autocast: 4 GB of fp32 gradients; 10 blocks of 0.09e9 parameters.
TEST(MemoryModel, GradientsAllocatedInBackwardMeetOnlyWhatIsLeftOfTheActivations) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  WorkloadSummary w;
  w.layers = 10;
  w.largest_block_params = 90'000'000;  // 0.1e9 outside the blocks: the first are 0.19e9 (0.76 GB)
  w.blocks_params = 0.9e9;
  w.block_saved_bytes = 3e9;
  w.max_block_saved_bytes = 0.3e9;
  w.checkpointed_block_bytes = 0.5e9;
  w.max_block_input_bytes = 0.05e9;
  MemoryModelConstants freed;
  freed.gradients_allocated_in_backward = true;
  const auto gradients = [&](const MethodSet& methods, const MemoryModelConstants& c) {
    return predict_memory(1e9, Precision::kBf16, methods, cluster, w, c).gradients_bytes;
  };
  const MethodSet plain{};
  const MethodSet checkpointed{.activation_checkpointing = true};
  EXPECT_DOUBLE_EQ(gradients(plain, {}), 4e9);  // fp32 gradients of the fp32 master weights
  EXPECT_DOUBLE_EQ(gradients(plain, freed), 4e9 - (3e9 - 0.3e9));
  EXPECT_DOUBLE_EQ(gradients(checkpointed, freed), 4e9 - (0.5e9 - 0.05e9));
  w.block_saved_bytes = 30e9;  // activations far above the gradients: the first ones alone
  EXPECT_DOUBLE_EQ(gradients(plain, freed), 0.19 * 4e9);
  // The total moves by exactly what the gradients do.
  const MemoryBreakdown kept = predict_memory(1e9, Precision::kBf16, plain, cluster, w, {});
  const MemoryBreakdown m = predict_memory(1e9, Precision::kBf16, plain, cluster, w, freed);
  EXPECT_DOUBLE_EQ(kept.allocated_bytes() - m.allocated_bytes(), 4e9 - 0.19 * 4e9);
}

// The input embeddings' gradients come last in backward: an untied table is not among the first
// gradients, which bind when the activations are far above the gradients.
TEST(MemoryModel, InputEmbeddingGradientsComeLast) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  WorkloadSummary w;
  w.layers = 10;
  w.largest_block_params = 90'000'000;  // 0.1e9 outside the blocks
  w.blocks_params = 0.9e9;
  w.block_saved_bytes = 30e9;
  w.max_block_saved_bytes = 3e9;
  MemoryModelConstants freed;
  freed.gradients_allocated_in_backward = true;
  freed.root_unit_gradients_whole = true;
  // The gradients row and a root unit's whole gradients (in temporary), beyond what no gradient
  // changes.
  const auto gradients = [&](int64_t gpus, const MethodSet& methods) {
    MemoryModelConstants none = freed;
    none.root_unit_gradients_whole = false;
    const MemoryBreakdown m =
        predict_memory(1e9, Precision::kBf16, methods, {{1, gpus}, &gpu}, w, freed);
    const MemoryBreakdown n =
        predict_memory(1e9, Precision::kBf16, methods, {{1, gpus}, &gpu}, w, none);
    return m.gradients_bytes + (m.temporary_bytes - n.temporary_bytes);
  };
  const MethodSet plain{};
  const MethodSet zero3{.sharding = Sharding::kZero3};
  EXPECT_DOUBLE_EQ(gradients(1, plain), 0.19 * 4e9);
  // The root unit whole in bf16 beside one block's shard.
  EXPECT_DOUBLE_EQ(gradients(8, zero3), 0.1e9 * 2.0 + 0.09e9 * 2.0 / 8.0);
  w.input_only_embedding_params = 60'000'000;
  EXPECT_DOUBLE_EQ(gradients(1, plain), 0.13 * 4e9);
  EXPECT_DOUBLE_EQ(gradients(8, zero3), 0.04e9 * 2.0 + 0.09e9 * 2.0 / 8.0);
}

// Sharded (stage >= 2 over several GPUs), a root unit's gradients (root_unit_gradients_whole: the
// engine's, FSDP's) are whole, in the compute dtype, from the head's backward until backward ends
// (the input embeddings' only at the end); DeepSpeed's ZeRO holds only the shards.
TEST(MemoryModel, RootUnitGradientsWholeUntilBackwardEnds) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 8}, &gpu};
  WorkloadSummary w;
  w.layers = 10;
  w.largest_block_params = 90'000'000;
  w.blocks_params = 0.9e9;                     // 0.1e9 outside the blocks: the root unit
  w.input_only_embedding_params = 60'000'000;  // 0.04e9 of it early
  w.block_saved_bytes = 30e9;
  w.max_block_saved_bytes = 3e9;
  const MethodSet zero3{.sharding = Sharding::kZero3};
  // The gradients row and the root unit's whole gradients, which temporary counts.
  const auto gradients = [&](const MemoryModelConstants& c) {
    MemoryModelConstants none = c;
    none.root_unit_gradients_whole = false;
    const MemoryBreakdown m = predict_memory(1e9, Precision::kBf16, zero3, cluster, w, c);
    const MemoryBreakdown n = predict_memory(1e9, Precision::kBf16, zero3, cluster, w, none);
    return m.gradients_bytes + (m.temporary_bytes - n.temporary_bytes);
  };
  const double shards = 2.0 * 1e9 / 8.0;
  EXPECT_DOUBLE_EQ(gradients({}), shards);  // DeepSpeed: the shards alone
  MemoryModelConstants whole;
  whole.root_unit_gradients_whole = true;
  EXPECT_DOUBLE_EQ(gradients(whole), shards + 0.04e9 * 2.0);  // as backward starts
  w.block_saved_bytes = 3.1e9;  // backward frees 0.1e9 of activations: its end is the peak
  EXPECT_DOUBLE_EQ(gradients(whole), shards + 0.1e9 * 2.0 - 0.1e9);
  // The engine's reduce flattens them into a second copy after backward, when the last block's
  // activations are gone too: under its 3e9 nothing changes; with 0.2e9 of activations in all,
  // the copy is the peak.
  whole.root_gradients_flattened = true;
  EXPECT_DOUBLE_EQ(gradients(whole), shards + 0.1e9 * 2.0 - 0.1e9);
  w.block_saved_bytes = 0.2e9;
  w.max_block_saved_bytes = 0.1e9;
  EXPECT_DOUBLE_EQ(gradients(whole), shards + 2.0 * 0.1e9 * 2.0 - 0.2e9);
  whole.gradients_allocated_in_backward = true;  // the root's shard does not exist yet
  EXPECT_DOUBLE_EQ(gradients(whole), shards - 0.1e9 * 2.0 / 8.0 + 2.0 * 0.1e9 * 2.0 - 0.2e9);
}

// Ten blocks of 90M parameters of 1e9 (0.1e9 outside them), the largest tensor 50M.
WorkloadSummary step_summary() {
  WorkloadSummary w;
  w.layers = 10;
  w.largest_block_params = 90'000'000;
  w.blocks_params = 0.9e9;
  w.largest_param_tensor = 50'000'000;
  return w;
}

double step_temporary(const WorkloadSummary& w,
                      Precision precision,
                      int64_t gpus,
                      const MethodSet& methods,
                      const MemoryModelConstants& c) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  return predict_memory(1e9, precision, methods, {{1, gpus}, &gpu}, w, c).temporary_bytes;
}

// The optimizer's buffers (MemoryModelConstants::optimizer_buffers) count where the step, with
// every gradient and no activation, passes what forward and backward held: two fp32 copies of
// the largest tensor it updates, a parameter at stage 0 and a unit's flat shard above.
TEST(MemoryModel, OptimizerBuffersPeakOnlyAboveTheActivations) {
  WorkloadSummary w = step_summary();
  w.block_saved_bytes = 0.05e9;  // far below two copies of the largest tensor (0.4 GB)
  MemoryModelConstants plain_adam;
  plain_adam.optimizer_buffers = 2.0;
  const auto temporary = [&](int64_t gpus, const MethodSet& m, const MemoryModelConstants& c) {
    return step_temporary(w, Precision::kFp32, gpus, m, c);
  };
  const MethodSet plain{};
  const MethodSet zero1{.sharding = Sharding::kZero1};
  const MethodSet zero3{.sharding = Sharding::kZero3};
  const double base = temporary(1, plain, {});
  EXPECT_DOUBLE_EQ(temporary(1, plain, plain_adam) - base, 2.0 * 4.0 * 50e6 - 0.05e9);
  // Stage 1: one unit, all 1e9 parameters over 8 GPUs; stage 3: the root unit (0.1e9, above a
  // block's 0.09e9) over 8.
  EXPECT_DOUBLE_EQ(temporary(8, zero1, plain_adam) - temporary(8, zero1, {}),
                   2.0 * 4.0 * 1e9 / 8.0 - 0.05e9);
  EXPECT_DOUBLE_EQ(temporary(8, zero3, plain_adam) - temporary(8, zero3, {}),
                   2.0 * 4.0 * 0.1e9 / 8.0 - 0.05e9);
  w.block_saved_bytes = 1e9;  // the activations above the buffers: no change
  EXPECT_DOUBLE_EQ(temporary(1, plain, plain_adam), temporary(1, plain, {}));
  const MethodSet offloaded{.sharding = Sharding::kZero2, .offloading = true};
  w.block_saved_bytes = 0.0;
  EXPECT_DOUBLE_EQ(temporary(8, offloaded, plain_adam), temporary(8, offloaded, {}));
}

// The engine's step at stage >= 1 in bf16 copies the gradient shards to fp32 (4 bytes per
// parameter over N), fused Adam or not; under autocast at stage 0 the step comes after the
// weights' compute-dtype copies are gone, so buffers smaller than them never add.
TEST(MemoryModel, TheStepsFp32GradientCopiesAndTheCastCopiesItOutlives) {
  WorkloadSummary w = step_summary();
  w.block_saved_bytes = 0.05e9;
  const auto temporary = [&](int64_t gpus, const MethodSet& m, const MemoryModelConstants& c) {
    return step_temporary(w, Precision::kBf16, gpus, m, c);
  };
  MemoryModelConstants copies;
  copies.fp32_gradient_shard_copies = true;
  const MethodSet zero1{.sharding = Sharding::kZero1};
  // bf16 gradients whole (2e9) and 0.5e9 of fp32 shard copies, against 0.05e9 of activations.
  EXPECT_DOUBLE_EQ(temporary(8, zero1, copies) - temporary(8, zero1, {}), 0.5e9 - 0.05e9);
  EXPECT_DOUBLE_EQ(temporary(1, MethodSet{}, copies), temporary(1, MethodSet{}, {}));  // stage 0
  MemoryModelConstants plain_adam;
  plain_adam.optimizer_buffers = 2.0;  // 0.4e9, less than the 2e9 of bf16 weight copies
  EXPECT_DOUBLE_EQ(temporary(1, MethodSet{}, plain_adam), temporary(1, MethodSet{}, {}));
}

// The planner decides per configuration: the engine frees its gradients after each step but at
// stage 1 and under CUDA graphs, so only its one-micro-step rows of the other kinds plan them
// freed; another stack's only where its measurement says so (gradients_freed); and the engine's
// bucketed all-reduce adds one 64 MiB bucket without sharding over several GPUs.
TEST(Planner, GradientsFreedBetweenStepsWhereTheStackFreesThemAndOneMicroStepRuns) {
  ModelSpec model = catalog().model("pythia-160m");
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const double params = static_cast<double>(count_params(model).total);
  const auto gradients = [&](MethodSet methods, int64_t gpus, int64_t acc, const PlanOptions& o) {
    model.recipe.global_batch = 8 * gpus * acc;
    const PlanRow row = plan_configuration(model, {{1, gpus}, &gpu}, {methods, 8, acc}, o);
    return row.memory.gradients_bytes;
  };
  const MethodSet plain{};
  const MethodSet zero1{.sharding = Sharding::kZero1};
  const MethodSet zero2{.sharding = Sharding::kZero2};
  const MethodSet graphs{.free_lunch = true};
  const PlanOptions engine;
  EXPECT_LT(gradients(plain, 1, 1, engine), 4.0 * params);
  EXPECT_DOUBLE_EQ(gradients(plain, 1, 2, engine), 4.0 * params);
  EXPECT_DOUBLE_EQ(gradients(graphs, 1, 1, engine), 4.0 * params);
  EXPECT_DOUBLE_EQ(gradients(zero1, 2, 1, engine), 2.0 * params);
  EXPECT_LT(gradients(zero2, 2, 1, engine), 2.0 * params / 2.0);
  PlanOptions stack;
  stack.implementation.code = ModelCode::kHuggingFace;
  EXPECT_DOUBLE_EQ(gradients(plain, 1, 1, stack), 4.0 * params);
  stack.memory.stack_frees_gradients = true;
  EXPECT_LT(gradients(plain, 1, 1, stack), 4.0 * params);
  EXPECT_DOUBLE_EQ(gradients(plain, 1, 2, stack), 4.0 * params);

  const auto temporary = [&](int64_t gpus, const PlanOptions& o) {
    model.recipe.global_batch = 8 * gpus * 2;
    return plan_configuration(model, {{1, gpus}, &gpu}, {plain, 8, 2}, o).memory.temporary_bytes;
  };
  // The engine's all-reduce bucket comes after backward, under these activations (below: above
  // small ones); other stacks' DDP buckets are not modelled.
  EXPECT_DOUBLE_EQ(temporary(2, engine), temporary(1, engine));
  EXPECT_DOUBLE_EQ(temporary(2, stack), temporary(1, stack));
}

// The all-reduce's bucket (stage 0 over several GPUs) is held after backward, beside every
// gradient and no activation: it counts only where it passes what forward and backward held.
TEST(MemoryModel, AllReduceBucketAfterBackward) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  WorkloadSummary w;
  w.layers = 10;
  w.largest_block_params = 90'000'000;
  w.blocks_params = 0.9e9;
  w.block_saved_bytes = 0.05e9;
  MemoryModelConstants bucket;
  bucket.all_reduce_bucket_bytes = 0.2e9;
  const auto temporary = [&](int64_t gpus, const MemoryModelConstants& c) {
    return predict_memory(1e9, Precision::kFp32, MethodSet{}, {{1, gpus}, &gpu}, w, c)
        .temporary_bytes;
  };
  EXPECT_DOUBLE_EQ(temporary(2, bucket) - temporary(2, {}), 0.2e9 - 0.05e9);
  EXPECT_DOUBLE_EQ(temporary(1, bucket), temporary(1, {}));  // one GPU: no all-reduce
  w.block_saved_bytes = 1e9;
  EXPECT_DOUBLE_EQ(temporary(2, bucket), temporary(2, {}));
}

// What a model's output holds (the keys and values its layers return, its logits) lives where
// the code keeps it: until the forward returns (with checkpointing, which would free the keys and
// values, they are extra at the head's forward; without, attention keeps them anyway), and, where
// the training loop holds the output, through backward and beside the next step's forward.
TEST(MemoryModel, WhatTheOutputHoldsLivesWhereTheLoopKeepsIt) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  WorkloadSummary w;
  w.block_saved_bytes = 10e9;
  w.checkpointed_block_bytes = 1e9;
  w.max_block_saved_bytes = 2e9;
  w.op_buffer_bytes = 0.75e9;  // the blocks' phase: 0.75e9, checkpointed 2.75e9
  w.head_saved_bytes = 1e9;
  w.head_transient_bytes = 2e9;  // the head's backward: 3e9
  w.head_forward_bytes = 1.5e9;
  w.returned_bytes = 4e9;
  w.head_output_bytes = 1e9;
  const MethodSet plain{};
  const MethodSet checkpointed{.activation_checkpointing = true};
  const auto memory = [&](const MethodSet& methods) {
    return predict_memory(1e9, Precision::kBf16, methods, cluster, w, {});
  };
  // The loop drops the output: without checkpointing nothing changes (the head's backward is the
  // larger phase); checkpointed, the keys and values are alive as the forward ends.
  EXPECT_DOUBLE_EQ(memory(plain).activations_bytes, 10e9);
  EXPECT_DOUBLE_EQ(memory(plain).logits_loss_bytes, 3e9 - 0.75e9);
  EXPECT_DOUBLE_EQ(memory(checkpointed).activations_bytes, 3e9);
  EXPECT_DOUBLE_EQ(memory(checkpointed).logits_loss_bytes, 1.5e9 + 4e9 - 2.75e9);
  // The loop holds it: this step's logits (and, checkpointed, its keys and values) through
  // backward, and the previous step's output beside the next forward's head.
  w.holds_output = true;
  EXPECT_DOUBLE_EQ(memory(plain).activations_bytes, 10e9 + 1e9);
  EXPECT_DOUBLE_EQ(memory(plain).logits_loss_bytes, 1.5e9 + 4e9 + 1e9 - 0.75e9);
  EXPECT_DOUBLE_EQ(memory(checkpointed).activations_bytes, 3e9 + 1e9 + 4e9);
  EXPECT_DOUBLE_EQ(memory(checkpointed).logits_loss_bytes, 1.5e9 + 4e9 + 1e9 - 2.75e9);
}

// ZeRO (Rajbhandari et al. 2020), Figure 1: 7.5B parameters, 64 GPUs, mixed-precision Adam:
// 120 / 31.4 / 16.6 / 1.9 GB per GPU for baseline / stage 1 / 2 / 3.
TEST(MemoryModel, ZeroPaperModelStateExample) {
  const double params = 7.5e9;
  const auto gb = [&](Sharding s) {
    return model_state_memory(params, Precision::kFp16, s, /*offloading=*/false, 64)
               .model_state_bytes() /
           1e9;
  };
  EXPECT_NEAR(gb(Sharding::kNone), 120.0, 0.05);
  EXPECT_NEAR(gb(Sharding::kZero1), 31.4, 0.05);
  EXPECT_NEAR(gb(Sharding::kZero2), 16.6, 0.05);
  EXPECT_NEAR(gb(Sharding::kZero3), 1.9, 0.05);
  EXPECT_EQ(gb(Sharding::kFsdpShardGradOp), gb(Sharding::kZero2));
  EXPECT_EQ(gb(Sharding::kFsdpFullShard), gb(Sharding::kZero3));
}

// PaLM (Chowdhery et al. 2022), Appendix B: training FLOPs per token = 6N + 12 L H Q T, with N
// the non-embedding parameters plus the unembedding matrix.
// H Q is the query width (heads x head dimension); grouped-query attention narrows k and v, which
// N counts, not the attention's products.
TEST(Flops, DecodersMatchPalmFormula) {
  int checked = 0;
  for (const ModelSpec& m : catalog().models()) {
    if (m.family != Family::kGptNeox && m.family != Family::kLlama) continue;
    ++checked;
    const ParamCounts p = count_params(m);
    // A tied unembedding is the embedding matrix, multiplied all the same.
    const double n = static_cast<double>(p.non_embedding()) +
                     (m.arch.tie_word_embeddings ? static_cast<double>(p.unembedding) : 0.0);
    const double l = m.arch.n_layers, t = m.arch.seq_len;
    const double d = static_cast<double>(m.arch.n_heads * m.arch.attention_head_dim());
    const double palm = 6.0 * n + 12.0 * l * d * t;
    const double ours = 3.0 * forward_flops_per_sample(m) / t;
    EXPECT_NEAR(ours / palm, 1.0, 0.01) << m.name;
  }
  EXPECT_EQ(checked, 13);  // 10 Pythia, TinyLlama, OLMo, SmolLM
}

double saved_bytes(const Block& block) {
  double total = 0.0;
  for (const Op& op : block.ops) total += op.saved_bytes;
  return total;
}

const Op& op_named(const Block& block, const std::string& name) {
  for (const Op& op : block.ops) {
    if (op.name == name) return op;
  }
  throw std::logic_error("no op " + name);
}

// Grouped-query attention: TinyLlama's 4 key/value heads against the same model with 32. The qkv
// projection narrows by (32 + 2 x 4) / (3 x 32) of its FLOPs on both paths. The fused kernel keeps
// k and v at their width; the plain path repeats them to the query heads before its products (as
// transformers' eager code does), so there it keeps as much as without grouping.
TEST(Workload, GroupedQueryAttentionNarrowsKeysAndValuesWhereKept) {
  const ModelSpec gqa = catalog().model("tinyllama-1.1b");
  ModelSpec mha = gqa;
  mha.arch.n_kv_heads = mha.arch.n_heads;
  for (const bool fused : {false, true}) {
    WorkloadOptions o;
    o.fused_attention = fused;
    const Block narrow = build_workload(gqa, o).blocks.at(0);
    const Block wide = build_workload(mha, o).blocks.at(0);
    EXPECT_NEAR(op_named(narrow, "qkv").model_flops / op_named(wide, "qkv").model_flops,
                40.0 / 96.0,
                1e-12);
    // k and v kept for backward by the fused kernel, bf16, per sample.
    const double kv_bytes_saved = 2.0 * 2048 * (2048 - 256) * 2.0;
    EXPECT_NEAR(saved_bytes(wide) - saved_bytes(narrow), fused ? kv_bytes_saved : 0.0, 1.0)
        << fused;
    if (fused) {
      EXPECT_LT(op_named(narrow, "fused_attention").bytes, op_named(wide, "fused_attention").bytes);
    } else {
      EXPECT_EQ(op_named(narrow, "softmax").saved_bytes, op_named(wide, "softmax").saved_bytes);
    }
  }
}

// The llama layer: no biases (7 weight tensors and 2 RMSNorm weights), Qwen2's 3 q/k/v biases,
// OLMo's parameter-free LayerNorm; the FSDP and optimizer per-tensor costs count them.
TEST(Workload, LlamaLayerTensorsFollowTheVariant) {
  ModelSpec m = catalog().model("tinyllama-1.1b");
  EXPECT_EQ(build_workload(m, {}).blocks.at(0).param_tensors, 9);
  m.arch.qkv_bias = true;
  EXPECT_EQ(build_workload(m, {}).blocks.at(0).param_tensors, 12);
  EXPECT_EQ(build_workload(catalog().model("olmo-1b"), {}).blocks.at(0).param_tensors, 7);
}

// ConvNeXt paper (Liu et al. 2022), Table 1 / Table 12: ConvNeXt-L 34.4G and ConvNeXt-XL 60.9G
// FLOPs at 224x224 (fvcore counts multiply-adds).
// One layer's time is the repeated block's kernels alone: every micro-step runs n_layers of them
// and more (embeddings, head, the host's launches), so they are part of the compute time, most of
// it for a deep model; a host-bound plain run takes longer than its kernels.
TEST(Planner, OneLayerTimeIsPartOfTheCompute) {
  const ModelSpec& model = catalog().model("pythia-1b");
  const Cluster cluster{{1, 4}, &catalog().gpu("a100-80gb-sxm")};
  const PlanResult result = plan(model, cluster, {});
  ASSERT_TRUE(result.best.has_value());
  for (const PlanRow& row : result.rows) {
    ASSERT_GT(row.layer_time_s, 0.0);
    const double layers = static_cast<double>(model.arch.n_layers * row.config.grad_acc_steps);
    EXPECT_LE(layers * row.layer_time_s, row.time.compute_s * (1.0 + 1e-12));
  }
  const PlanRow& best = *result.best;
  const double layers = static_cast<double>(model.arch.n_layers * best.config.grad_acc_steps);
  EXPECT_GT(layers * best.layer_time_s, 0.5 * best.time.compute_s);
  // Twice the micro-batch, about twice the layer's kernels.
  Configuration wider = best.config;
  wider.micro_batch_size *= 2;
  wider.grad_acc_steps /= 2;
  const PlanRow twice = plan_configuration(model, cluster, wider, {});
  EXPECT_NEAR(twice.layer_time_s / best.layer_time_s, 2.0, 0.2);
}

TEST(Flops, ConvnextMatchesPaper) {
  EXPECT_NEAR(
      forward_flops_per_sample(catalog().model("convnext-large-1k")) / 2 / 34.4e9, 1.0, 0.01);
  EXPECT_NEAR(
      forward_flops_per_sample(catalog().model("convnext-xlarge-22k")) / 2 / 60.9e9, 1.0, 0.01);
}

// ViT-L/16 at 224x224: 61.6G multiply-adds (as tabulated in the DeiT/Swin comparisons).
TEST(Flops, VitLargeMatchesPublished) {
  EXPECT_NEAR(forward_flops_per_sample(catalog().model("vit")) / 2 / 61.6e9, 1.0, 0.01);
}

}  // namespace
}  // namespace gpudays

namespace gpudays {
namespace {

using test::catalog;

// Loader workers (all cores but the training process's) x the measured rate per core.
TEST(InputPipeline, WorkersTimesTheMeasuredRate) {
  EXPECT_FALSE(input_bound(/*images=*/false, 512, {}).applies);
  const InputBound jpeg = input_bound(true, 644.0 * 7, {ImageInput::kJpeg, 8});
  EXPECT_TRUE(jpeg.applies);
  EXPECT_DOUBLE_EQ(jpeg.images_per_s, 644.0 * 7);
  EXPECT_DOUBLE_EQ(jpeg.step_time_s, 1.0);
  EXPECT_DOUBLE_EQ(input_bound(true, 399, {ImageInput::kJpegHeavyAug, 1}).step_time_s, 1.0);
  EXPECT_GT(images_per_s_per_core(ImageInput::kPacked),
            10 * images_per_s_per_core(ImageInput::kJpeg));
  EXPECT_EQ(parse_image_input("jpeg-deit"), ImageInput::kJpegHeavyAug);
  EXPECT_THROW(parse_image_input("png"), InputError);
  // Synthetic input (a benchmark's tensors) has no loader to wait for.
  EXPECT_EQ(parse_image_input("synthetic"), ImageInput::kSynthetic);
  EXPECT_FALSE(input_bound(true, 1e9, {ImageInput::kSynthetic, 1}).applies);
}

// ConvNeXt-L on an H100 needs thousands of images a second; two host cores decoding JPEGs with
// DeiT's augmentation give one worker at 399 a second: the loader sets the step time. From packed
// images it does not, and text models have no such bound.
TEST(InputPipeline, FewCoresDecodingJpegsBoundAVisionStep) {
  const ModelSpec& convnext = catalog().model("convnext-large-1k");
  const Cluster cluster{{1, 8}, &catalog().gpu("h100-sxm")};
  PlanOptions options;
  const PlanResult packed = plan(convnext, cluster, options);
  ASSERT_TRUE(packed.best);
  EXPECT_FALSE(packed.best->input_bound);
  EXPECT_TRUE(packed.best->input.applies);
  options.input = {ImageInput::kJpegHeavyAug, 2};
  const PlanResult jpeg = plan(convnext, cluster, options);
  ASSERT_TRUE(jpeg.best);
  const PlanRow& b = *jpeg.best;
  EXPECT_TRUE(b.input_bound);
  const double per_gpu = static_cast<double>(convnext.recipe.global_batch) / 8.0;
  EXPECT_DOUBLE_EQ(b.step_time_s, per_gpu / 399.0);
  EXPECT_LT(b.input.device_step_time_s, b.step_time_s);
  EXPECT_GT(b.training_days, packed.best->training_days);
  const PlanResult text = plan(catalog().model("pythia-70m"), cluster, options);
  EXPECT_FALSE(text.best->input.applies);
  EXPECT_FALSE(text.best->input_bound);
}

// The planner's last check: a step that is not finite, or training past 10^12 days, is an
// InputError naming the step's largest part, never a row of inf days (`plan` printed "inf days",
// "0 tokens/s") or of 300 digits. Here a CPU optimizer near 0, past the flags' bounds.
TEST(Planner, ANonFiniteOrAbsurdTimeIsAnInputErrorNamingItsPart) {
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const Cluster cluster{{1, 1}, &gpu};
  PlanOptions options;
  options.preset = MethodPreset::kAll;
  options.pin.pin(&MethodSet::offloading, true);
  for (const double rate : {1e-300, 0.0}) {
    options.time.cpu_adam_params_per_s = rate;
    try {
      plan(catalog().model("pythia-1b"), cluster, options);
      FAIL() << "no error at " << rate << " parameters/s";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("pythia-1b on 1 x a100-80gb-sxm"), std::string::npos) << what;
      EXPECT_NE(what.find("the largest part is offloading (the host link, the CPU optimizer's "
                          "rate)"),
                std::string::npos)
          << what;
    }
  }
  options.time.cpu_adam_params_per_s = kMinCpuAdamParamsPerS;  // slow, and planned
  EXPECT_TRUE(plan(catalog().model("pythia-1b"), cluster, options).best.has_value());
}

}  // namespace
}  // namespace gpudays
