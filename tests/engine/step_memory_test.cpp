// A whole optimizer step's peak memory, measured on the CPU with the tracking allocator, against
// what the planner plans for the same configuration (plan_configuration's allocated part: weights,
// gradients, Adam's moments, activations, the head's phase and temporaries), fp32 on the plain
// path: when the gradients exist beside the activations (plan/memory_model.cpp,
// gradients_at_peak).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "distributed/communicator.h"
#include "engine/apply_methods.h"
#include "engine/cpu_memory.h"
#include "engine/engine.h"
#include "engine/trainable.h"
#include "plan/memory_model.h"
#include "plan/planner.h"

namespace gpudays {
namespace {

ModelSpec tiny_lm(int64_t layers, int64_t width, int64_t seq_len) {
  ModelSpec spec =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
  spec.arch.n_layers = layers;
  spec.arch.d_model = width;
  spec.arch.d_ffn = 4 * width;
  spec.arch.seq_len = seq_len;
  spec.arch.max_position_embeddings = seq_len;
  spec.recipe.dropout = 0.0;  // the CPU's dropout keeps a full-size mask (checkpoint_memory_test)
  return spec;
}

struct StepPeak {
  double measured_bytes = 0.0;  // the second step's peak (Adam's moments exist)
  double params = 0.0;
};

// The engine's plain fp32 path on the CPU, micro-batches of `micro` sequences, `accumulation` of
// them per step; the second step's peak.
StepPeak measure(const ModelSpec& spec, int64_t micro, int64_t accumulation) {
  CpuMemoryScope scope;
  at::manual_seed(0);
  auto model = make_trainable(spec, {/*fused_kernels=*/false, /*checkpointing=*/false, 1234});
  auto comm = make_single_process_communicator();
  auto engine = make_engine(
      *model,
      *comm,
      apply_methods(Configuration{MethodSet{}, micro, accumulation}, spec.recipe, at::kCPU).engine);
  const auto micro_loss = [&](int64_t i) { return model->micro_loss(i * micro, micro); };
  engine->step(micro_loss);
  scope.reset_peak();
  engine->step(micro_loss);
  StepPeak p;
  p.measured_bytes = static_cast<double>(scope.stats().peak_bytes);
  for (const at::Tensor& t : model->parameters()) p.params += static_cast<double>(t.numel());
  return p;
}

MemoryBreakdown planned(ModelSpec spec, int64_t micro, int64_t accumulation) {
  static const Catalog catalog = Catalog::load({});
  static GpuSpec host = catalog.gpu("a100");
  host.kind = DeviceKind::kCpu;
  spec.recipe.global_batch = micro * accumulation;
  const Cluster cluster{{1, 1}, &host};
  return plan_configuration(spec, cluster, Configuration{MethodSet{}, micro, accumulation}, {})
      .memory;
}

constexpr double kTolerance = 0.05;

// Measured against planned for a model whose gradients (12.8 MB) and activations (8 to 17 MB)
// are of a size: with one micro-step the engine sets the gradients to None after the step, so the
// next forward runs without them and backward allocates them as it frees the activations; with
// two, the second micro-step's forward runs beside the first one's gradients. Planned with the
// gradients whole at one micro-step, the peak at micro-batch 4 is 21% over what was measured.
TEST(StepMemory, GradientsAndActivationsPeakTogetherOnlyWhenTheyCoexist) {
  const ModelSpec spec = tiny_lm(/*layers=*/4, /*width=*/256, /*seq_len=*/64);
  for (int64_t micro : {2, 4}) {
    for (int64_t acc : {1, 2}) {
      const StepPeak p = measure(spec, micro, acc);
      const MemoryBreakdown m = planned(spec, micro, acc);
      const double whole = m.allocated_bytes() - m.gradients_bytes + 4.0 * p.params;
      std::printf(
          "[step memory] micro-batch %lld, accumulation %lld: measured %.3f MB, planned %.3f MB "
          "(gradients %.3f of %.3f MB), %+.1f%%; with the gradients whole %.3f MB, %+.1f%%\n",
          static_cast<long long>(micro),
          static_cast<long long>(acc),
          p.measured_bytes / 1e6,
          m.allocated_bytes() / 1e6,
          m.gradients_bytes / 1e6,
          4.0 * p.params / 1e6,
          100.0 * (p.measured_bytes / m.allocated_bytes() - 1.0),
          whole / 1e6,
          100.0 * (p.measured_bytes / whole - 1.0));
      EXPECT_NEAR(p.measured_bytes, m.allocated_bytes(), kTolerance * m.allocated_bytes())
          << "micro-batch " << micro << ", accumulation " << acc;
      if (acc == 1) {
        EXPECT_LT(m.gradients_bytes, 4.0 * p.params);
      } else {
        EXPECT_DOUBLE_EQ(m.gradients_bytes, 4.0 * p.params);
      }
    }
  }
  const StepPeak p = measure(spec, 4, 1);
  const MemoryBreakdown m = planned(spec, 4, 1);
  const double whole = m.allocated_bytes() - m.gradients_bytes + 4.0 * p.params;
  EXPECT_GT(std::abs(p.measured_bytes - whole), 2.0 * kTolerance * whole) << "the test discerns";
}

// Long sequences, where plain attention's fp32 scores (b h T^2) are the largest buffers: the
// softmax's two score-sized buffers and its output's gradient meet only the activations of the
// ops before it in the last block (backward has freed the MLP's; forward has not made them yet).
// Counted on top of every activation, as before 2026-12-05, the peak at 512 tokens is 12% over
// what was measured.
TEST(StepMemory, AnOpsBuffersMeetOnlyTheActivationsAliveAsItRuns) {
  const ModelSpec spec = tiny_lm(/*layers=*/4, /*width=*/256, /*seq_len=*/512);
  const double scores_bytes = 4.0 * 2 * spec.arch.n_heads * 512.0 * 512.0;  // micro-batch 2
  for (int64_t acc : {1, 2}) {
    const StepPeak p = measure(spec, /*micro=*/2, acc);
    const MemoryBreakdown m = planned(spec, 2, acc);
    const double on_top = m.allocated_bytes() - m.temporary_bytes + 3.0 * scores_bytes;
    std::printf(
        "[step memory] 512 tokens, accumulation %lld: measured %.3f MB, planned %.3f MB "
        "(temporary %.3f MB), %+.1f%%; the softmax's buffers on top of every activation %.3f MB, "
        "%+.1f%%\n",
        static_cast<long long>(acc),
        p.measured_bytes / 1e6,
        m.allocated_bytes() / 1e6,
        m.temporary_bytes / 1e6,
        100.0 * (p.measured_bytes / m.allocated_bytes() - 1.0),
        on_top / 1e6,
        100.0 * (p.measured_bytes / on_top - 1.0));
    EXPECT_NEAR(p.measured_bytes, m.allocated_bytes(), kTolerance * m.allocated_bytes())
        << "accumulation " << acc;
    EXPECT_GT(on_top - p.measured_bytes, 1.5 * kTolerance * p.measured_bytes)
        << "the test discerns";
  }
}

// A model whose vocabulary tables dwarf its activations (one layer, 8-token sequences, 16,384
// tokens): the per-tensor Adam's buffers, two fp32 copies of the largest table (three with L2
// weight decay), beside every gradient after backward has freed the activations, are the step's
// peak. Planned without them, the peak is 19% under what was measured.
TEST(StepMemory, ThePerTensorOptimizersBuffersPeakBesideTheGradients) {
  ModelSpec spec = tiny_lm(/*layers=*/1, /*width=*/128, /*seq_len=*/8);
  spec.arch.vocab_size = 16384;
  const double table_bytes = 4.0 * 16384 * 128;
  for (double weight_decay : {0.0, 0.1}) {
    spec.recipe.weight_decay = weight_decay;
    const StepPeak p = measure(spec, /*micro=*/1, /*accumulation=*/1);
    const MemoryBreakdown m = planned(spec, 1, 1);
    const double buffers = weight_decay > 0.0 ? 3.0 : 2.0;
    const double without = m.allocated_bytes() - buffers * table_bytes;
    std::printf(
        "[step memory] weight decay %.1f: measured %.3f MB, planned %.3f MB, %+.1f%%; without the "
        "optimizer's buffers %.3f MB, %+.1f%%\n",
        weight_decay,
        p.measured_bytes / 1e6,
        m.allocated_bytes() / 1e6,
        100.0 * (p.measured_bytes / m.allocated_bytes() - 1.0),
        without / 1e6,
        100.0 * (p.measured_bytes / without - 1.0));
    EXPECT_NEAR(p.measured_bytes, m.allocated_bytes(), kTolerance * m.allocated_bytes())
        << "weight decay " << weight_decay;
    EXPECT_GT(p.measured_bytes - without, 2.0 * kTolerance * without) << "the test discerns";
  }
}

}  // namespace
}  // namespace gpudays
