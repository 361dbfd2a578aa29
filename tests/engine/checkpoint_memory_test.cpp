// Activation checkpointing's memory saving, measured on the CPU with the tracking allocator,
// against the planner's prediction (plan/workload*.cpp, as plan/memory_model.cpp uses it): the
// peak of one micro-batch's forward + backward without checkpointing minus the peak with it,
// versus block_saved - (block_input + max_block_saved). fp32, plain kernels, every family.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "engine/cpu_memory.h"
#include "engine/trainable.h"
#include "plan/device_model.h"
#include "plan/workload.h"
#include "plan/workload_summary.h"

namespace gpudays {
namespace {

constexpr double kTolerance = 0.15;  // within 15% of the prediction

ModelSpec tiny(const std::string& name) {
  ModelSpec spec = load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/" + name + ".toml");
  // Dropout off: on the CPU at::dropout keeps a full-size mask in the activation dtype, where
  // CUDA's fused dropout (what the planner models) keeps one byte per element.
  spec.recipe.dropout = 0.0;
  return spec;
}

struct StepMemory {
  int64_t forward_bytes = 0;  // live after the forward: what autograd keeps (plus the loss)
  int64_t peak_bytes = 0;     // peak over forward and backward
};

// One micro-batch's forward and backward, after a warm-up step (first-call allocations) whose
// gradients are dropped, so that both runs allocate their gradients inside the measurement.
StepMemory measure_step(const ModelSpec& spec, int64_t batch, bool checkpointing) {
  at::manual_seed(0);
  auto model = make_trainable(spec, {/*fused_kernels=*/false, checkpointing, /*data_seed=*/1234});
  model->micro_loss(0, batch).backward();
  for (at::Tensor& p : model->parameters()) p.mutable_grad() = at::Tensor();
  CpuMemoryScope scope;
  StepMemory m;
  {
    const at::Tensor loss = model->micro_loss(0, batch);
    m.forward_bytes = scope.stats().live_bytes;
    loss.backward();
  }
  m.peak_bytes = scope.stats().peak_bytes;
  return m;
}

WorkloadSummary planned(const ModelSpec& spec, int64_t batch) {
  static const Catalog catalog = Catalog::load({});
  const DeviceModel device(catalog.gpu("a100"), Precision::kFp32, /*free_lunch=*/false);
  const WorkloadOptions options{.micro_batch_size = batch,
                                .activation_bytes = 4.0,
                                .fused_attention = false,
                                .fast_scan = false,
                                .implementation = {}};
  return summarize(build_workload(spec, options), device);
}

void expect_saving_as_planned(const ModelSpec& spec, int64_t batch) {
  const StepMemory plain = measure_step(spec, batch, /*checkpointing=*/false);
  const StepMemory checkpointed = measure_step(spec, batch, /*checkpointing=*/true);
  const WorkloadSummary w = planned(spec, batch);
  const double measured = static_cast<double>(plain.peak_bytes - checkpointed.peak_bytes);
  const double predicted =
      w.block_saved_bytes - (w.checkpointed_block_bytes + w.max_block_saved_bytes);
  const double planned_forward = w.stem_saved_bytes + w.block_saved_bytes + w.head_saved_bytes;
  std::printf(
      "[checkpoint memory] %s batch %lld: saving measured %.3f MB, planned %.3f MB "
      "(%+.1f%%); kept after forward: plain measured %.3f MB, planned %.3f MB; "
      "checkpointed measured %.3f MB\n",
      spec.name.c_str(),
      static_cast<long long>(batch),
      measured / 1e6,
      predicted / 1e6,
      100.0 * (measured - predicted) / predicted,
      plain.forward_bytes / 1e6,
      planned_forward / 1e6,
      checkpointed.forward_bytes / 1e6);
  EXPECT_GT(predicted, 0.0) << spec.name;
  EXPECT_LE(std::abs(measured - predicted), kTolerance * predicted)
      << spec.name << ": measured " << measured << " bytes, planned " << predicted;
}

// Sizes where the blocks' activations dominate the step: more layers, longer sequences, and
// small vocabularies and widths (parameters and logits stay small).
TEST(CheckpointMemory, GptNeoxSavingIsAsPlanned) {
  ModelSpec spec = tiny("tiny-gpt-neox");
  spec.arch.n_layers = 8;
  spec.arch.seq_len = 128;
  spec.arch.max_position_embeddings = 128;
  expect_saving_as_planned(spec, /*batch=*/4);
  spec.arch.use_parallel_residual = false;
  spec.name = "tiny-gpt-neox-sequential";
  expect_saving_as_planned(spec, /*batch=*/4);
}

TEST(CheckpointMemory, RobertaSavingIsAsPlanned) {
  ModelSpec spec = tiny("tiny-roberta");
  spec.arch.n_layers = 8;
  spec.arch.seq_len = 128;
  spec.arch.max_position_embeddings = 132;
  expect_saving_as_planned(spec, /*batch=*/4);
}

TEST(CheckpointMemory, VitSavingIsAsPlanned) {
  ModelSpec spec = tiny("tiny-vit");
  spec.arch.n_layers = 8;
  spec.arch.image_size = 64;
  spec.arch.seq_len = 257;  // 16 x 16 patches + the class token
  expect_saving_as_planned(spec, /*batch=*/4);
}

TEST(CheckpointMemory, ConvnextSavingIsAsPlanned) {
  ModelSpec spec = tiny("tiny-convnext");
  spec.arch.depths = {3, 3, 27, 3};  // ConvNeXt-L's
  spec.arch.image_size = 128;
  expect_saving_as_planned(spec, /*batch=*/2);
}

// The llama family (tiny-llama: RMSNorm, SwiGLU, 4 query heads sharing 2 key/value heads).
// The llama layer's saved tensors: each RMSNorm keeps its normalised input (the weight's product
// needs it; n·d), the SwiGLU product keeps silu(gate) beside gate and up (n·f), and the plain
// attention's matmuls keep the repeated keys and values (2·n·(q − kv)): without the three the plan
// fell short by 24% (measured saving 20.96 MB against 16.84 MB planned).
TEST(CheckpointMemory, LlamaSavingIsAsPlanned) {
  ModelSpec spec = tiny("tiny-llama");
  spec.arch.n_layers = 8;
  spec.arch.seq_len = 128;
  spec.arch.max_position_embeddings = 128;
  expect_saving_as_planned(spec, /*batch=*/4);
}

TEST(CheckpointMemory, MambaSavingIsAsPlanned) {
  ModelSpec spec = tiny("tiny-mamba");
  spec.arch.n_layers = 8;
  spec.arch.seq_len = 128;
  expect_saving_as_planned(spec, /*batch=*/2);
}

// The head's tensors (log-probabilities and the gradients of them and of the logits) are freed by
// the head's backward before the first block's backward (or recompute) begins, so the step's peak
// above the gradients and the blocks' kept activations is the larger of the head's phase and a
// block's backward phase, not their sum (plan/memory_model.cpp). Measured at a vocabulary where
// the head's phase is the larger, with and without checkpointing, against the step's kept
// activations plus either: no gradient exists yet when the head's backward peaks (they were set
// to None), so the expectation counts none, and the tolerance is tight enough that the sum fails.
TEST(CheckpointMemory, HeadAndBlockPhasesDoNotCoexist) {
  ModelSpec spec = tiny("tiny-gpt-neox");
  spec.arch.n_layers = 4;
  spec.arch.seq_len = 128;
  spec.arch.max_position_embeddings = 128;
  spec.arch.vocab_size = 4096;
  const int64_t batch = 4;
  const WorkloadSummary w = planned(spec, batch);
  const double head = w.head_saved_bytes + w.head_transient_bytes;
  constexpr double kPhaseTolerance = 0.03;
  for (bool checkpointing : {true, false}) {
    const StepMemory step = measure_step(spec, batch, checkpointing);
    const double kept =
        w.stem_saved_bytes + (checkpointing ? w.checkpointed_block_bytes : w.block_saved_bytes);
    const double block = (checkpointing ? w.max_block_saved_bytes : 0.0) + w.op_buffer_bytes;
    const double larger = kept + std::max(head, block);
    const double sum = kept + head + block;
    const double measured = static_cast<double>(step.peak_bytes);
    std::printf(
        "[checkpoint memory] checkpointing %s: head %.3f MB, block phase %.3f MB; peak measured "
        "%.3f MB, planned as the larger %.3f MB (%+.1f%%), as the sum %.3f MB (%+.1f%%)\n",
        checkpointing ? "on" : "off",
        head / 1e6,
        block / 1e6,
        measured / 1e6,
        larger / 1e6,
        100.0 * (measured / larger - 1.0),
        sum / 1e6,
        100.0 * (measured / sum - 1.0));
    ASSERT_GT(head, block) << "the head must be the larger phase";
    EXPECT_LE(std::abs(measured - larger), kPhaseTolerance * larger) << checkpointing;
    EXPECT_GT(std::abs(measured - sum), kPhaseTolerance * sum) << checkpointing;
  }
}

}  // namespace
}  // namespace gpudays
