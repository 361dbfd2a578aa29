// The training engine: one optimizer step of a model's parameters from its micro-batch losses,
// with the methods of the search space applied from outside in this order: precision (autocast;
// fp16 loss scaling; at stage >= 1 mixed precision keeps bf16/fp16 working weights and an fp32
// master slice, as DeepSpeed does), gradient accumulation, data-parallel reduction for the sharding
// stage (none: all-reduce after the last micro-step; zero_1: reduce-scatter after the last
// micro-step; zero_2 / fsdp_shard_grad_op: reduce-scatter each block's gradient as soon as its
// backward is done, every micro-step; zero_3 / fsdp_full_shard: as stage 2, and each block's
// weights are gathered just before its forward and its backward and freed after), unscaling and
// overflow check, clipping by the global norm, the optimizer on this rank's slice (on the CPU when
// offloading), write-back of the updated weights (all-gather at stage 1/2). Activation
// checkpointing is applied by the model adapter's block runner (engine/activation_checkpoint.h);
// the engine wraps that runner (block_runner) for its per-block work at stage 2 and 3.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog/model_spec.h"
#include "distributed/communicator.h"
#include "engine/adam.h"
#include "engine/loss_scaler.h"
#include "engine/schedule.h"
#include "models/block_runner.h"
#include "search_space/methods.h"

namespace gpudays {

// The boundaries of a step's parts, for timing them separately (the benchmark's composed timing).
// A micro-step spans its forward, backward and gradient reduction (all-reduce or reduce-scatter
// on the last micro-step; every micro-step at stage 2); the optimizer part spans unscaling and the
// overflow check, clipping, the update and the all-gather of updated weights.
enum class StepPhase { kMicroStepBegin, kMicroStepEnd, kOptimizerBegin, kOptimizerEnd };
using PhaseHook = std::function<void(StepPhase phase, int64_t micro_step)>;

class GraphBackend;  // engine/cuda_graph.h

// The engine's mechanisms; engine/apply_methods.h sets them from a configuration.
struct EngineOptions {
  Sharding sharding = Sharding::kNone;  // the data-parallel mechanism: its stage 0..3
  bool offload = false;                 // the optimizer's slice on the CPU (stage >= 1)
  Precision precision = Precision::kFp32;
  int64_t grad_acc_steps = 1;
  double clip_grad_norm = 0.0;  // 0: no clipping
  AdamOptions adam;
  ScheduleOptions schedule;
  LossScalerOptions loss_scaler;
  PhaseHook phase_hook;  // optional; micro_step is -1 for the optimizer phases
  // Capture the micro-step as a CUDA graph where it can be: a CUDA device, no sharding, and
  // micro-batches given as MicroBatches (the caller leaves it off with activation checkpointing).
  bool cuda_graphs = false;
  // The graph backend (engine/cuda_graph.h); empty: CUDA's on a CUDA device, none elsewhere. Tests
  // give the CPU stand-in to run the graph sequence without a GPU.
  std::function<std::unique_ptr<GraphBackend>()> graph_backend;
  // TF32 for fp32 matmuls and convolutions (Ampere and newer).
  bool tf32 = false;
  // Stage 0 over several ranks: the gradients are all-reduced in buckets of consecutive
  // parameters of at most this many fp32 bytes (search_space/methods.h; tests set it smaller).
  int64_t all_reduce_bucket_bytes = kAllReduceBucketBytes;
};

// The loss of micro-batch `index` (0 .. grad_acc_steps-1) of this rank, as a scalar tensor whose
// backward reaches the parameters.
using MicroLoss = std::function<at::Tensor(int64_t index)>;

// A micro-batch in two parts, so that the micro-step can be captured as a CUDA graph: `load(i)`
// puts micro-batch i of this rank into input buffers that keep their addresses, `loss()` computes
// the loss from them (no host synchronisation inside).
// `load` returns true when it put the micro-batch into new buffers (the first load, or a new
// shape): a captured graph read the old ones and is captured again.
struct MicroBatches {
  std::function<bool(int64_t index)> load;
  std::function<at::Tensor()> loss;
};

// A piece of the gradient this rank holds after the data-parallel reduction: elements
// [offset, offset + values.numel()) of parameter `param` (its index in the engine's parameters,
// flattened).
struct GradientPiece {
  size_t param = 0;
  int64_t offset = 0;
  at::Tensor values;  // [n] fp32 copy
};

struct StepResult {
  double loss = 0.0;       // mean over this rank's micro-batches
  double grad_norm = 0.0;  // global norm before clipping (0 when the step was skipped)
  double lr = 0.0;
  bool applied = true;  // false: an fp16 overflow skipped it
};

// One slot of the optimizer's state on this rank (see Engine::optimizer_slices).
struct OptimizerSlice {
  std::vector<int64_t> parameters;  // the slot's parameters (indices), in its flat order
  int64_t numel = 0;                // the whole slot's elements
  int64_t first = 0;                // this rank's part: [first, first + count)
  int64_t count = 0;
  at::Tensor exp_avg;     // [count]
  at::Tensor exp_avg_sq;  // [count]
};
using SliceReader =
    std::function<at::Tensor(size_t slot, const std::string& moment, int64_t first, int64_t count)>;

class MicroStepGraph;
class ShardUnits;
class Trainable;

class Engine {
 public:
  // params: the model's fp32 parameters; blocks: the parameters of each repeated block (empty: the
  // model has none, and stages 2 and 3 treat the whole model as one unit). At stage >= 1 the
  // parameters are converted in place (working dtype, views into flat buffers; at stage 3 their
  // storage is freed between uses: call gather_parameters() before reading them outside a step).
  // Throws InputError for method sets it cannot run.
  Engine(std::vector<at::Tensor> params,
         Communicator& comm,
         EngineOptions options,
         models::BlockParameters blocks = {});
  ~Engine();

  // The step of the benchmark and the trainer: loads into static buffers, then the loss (graphed
  // where the options allow).
  StepResult step(const MicroBatches& batches);
  // The same with each micro-batch's loss computed in one call (never graphed; for tests and
  // callers without static buffers).
  StepResult step(const MicroLoss& micro_loss);
  bool cuda_graph_captured() const;
  // The micro-step's graph, or nullptr where graphs do not apply.
  const MicroStepGraph* micro_step_graph() const { return graph_.get(); }
  int64_t steps() const { return steps_; }
  double loss_scale() const { return scaler_.scale(); }
  int64_t optimizer_state_bytes() const;  // on this rank

  // The runner the model's blocks must go through (wrapping `inner`, the trainable's own).
  models::BlockRunner block_runner(models::BlockRunner inner);
  // Stage 3: gathers every unit's weights, so the model can be read or evaluated (kept until the
  // next step). No-op at other stages.
  void gather_parameters();
  // For tests: this rank's reduced gradient as fp32 copies, after the reduction and before
  // unscaling and clipping (call it from the phase hook at kOptimizerBegin; fp16's are still
  // multiplied by the loss scale). Stage 0: every parameter's whole gradient; stage >= 1: the
  // rank's slice of each unit, padding left out. Reads only; the step is unchanged.
  std::vector<GradientPiece> local_gradients() const;
  // Checkpointing (trainer/train_state.h); collective at stage >= 1: every rank calls them.
  // Every parameter as a full fp32 CPU tensor, in parameter order (stage >= 1: from the masters).
  std::vector<at::Tensor> full_parameters();
  // Sets every parameter (and at stage >= 1 this rank's master slice) from full fp32 tensors.
  void load_full_parameters(const std::vector<at::Tensor>& full);
  // The optimizer's state in slots: stage 0 one per parameter (replicated on every rank), stage
  // >= 1 one per shard unit holding parameters (elements [first, first + count) of its flat
  // buffer on this rank, padding left out). Tensors are flat views of the live state.
  std::vector<OptimizerSlice> optimizer_slices();
  bool optimizer_replicated() const { return stage() == 0; }
  // Restores every slot: `read(slot, moment, first, count)` returns elements [first, first +
  // count) of the whole slot's moment ("exp_avg", "exp_avg_sq"), whatever world wrote it.
  void load_optimizer(const SliceReader& read, double step_count);
  // The counters a resumed run continues from: optimizer steps taken (skipped fp16 steps
  // included), the optimizer's own steps, the loss scaler.
  void restore_counters(int64_t steps, int64_t optimizer_steps, const LossScalerState& scaler);
  int64_t optimizer_steps() const;
  double optimizer_step_count() const;  // the per-parameter step count (all equal)
  LossScalerState loss_scaler_state() const { return scaler_.state(); }
  // Called when the engine is destroyed (make_engine: restores the trainable's own runner).
  void on_destroy(std::function<void()> fn) { on_destroy_ = std::move(fn); }

 private:
  void phase(StepPhase p, int64_t micro_step) const;
  StepResult run_step(const MicroBatches& batches, bool graphable);
  double run_micro_steps(bool graphable);
  at::Tensor forward_backward();
  void begin_micro_step();
  void end_micro_step(bool last);
  void all_reduce_unsharded();
  void all_reduce_bucket(size_t begin, size_t end, int64_t elements);
  std::vector<at::Tensor> local_grads();
  bool unscale_and_check_overflow(const std::vector<at::Tensor>& grads);
  double clip(const std::vector<at::Tensor>& grads);
  at::TensorOptions scalar_options(const std::vector<at::Tensor>& grads,
                                   at::ScalarType dtype) const;
  void apply_update(double lr, const std::vector<at::Tensor>& grads);
  void clear_grads();
  int stage() const;

  std::vector<at::Tensor> params_;
  Communicator& comm_;
  EngineOptions options_;
  LossScaler scaler_;
  std::unique_ptr<ShardUnits> units_;      // stage >= 1
  std::unique_ptr<Adam> adam_;             // over params_ (stage 0) or the units' masters
  std::unique_ptr<MicroStepGraph> graph_;  // when cuda_graphs applies
  std::function<void()> on_destroy_;
  at::Tensor loss_factor_;                 // 0-dim: loss scale / accumulation (static for graphs)
  const MicroBatches* batches_ = nullptr;  // the step's, while it runs
  int64_t steps_ = 0;
};

// An engine for a trainable model, its block runner wrapped by the engine's.
std::unique_ptr<Engine> make_engine(Trainable& trainable,
                                    Communicator& comm,
                                    EngineOptions options);

}  // namespace gpudays
