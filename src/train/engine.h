// The training engine: one optimizer step of a model's parameters from its micro-batch losses,
// with the methods of the search space applied from outside in this order: precision (autocast;
// fp16 loss scaling), gradient accumulation, data-parallel reduction for the sharding stage
// (none: all-reduce; zero_1/fsdp-less stage 1: reduce-scatter once per step; zero_2 /
// fsdp_shard_grad_op: reduce-scatter every micro-step), unscaling and overflow check, clipping by
// the global norm, the optimizer on this rank's shard (on the CPU when offloading), all-gather of
// the updated weights. Activation checkpointing is applied by the model adapter's block runner
// (train/activation_checkpoint.h). Stage 3 (gathering weights per block) is not implemented yet.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

#include "catalog/model_spec.h"
#include "dist/communicator.h"
#include "plan/methods.h"
#include "train/adam.h"
#include "train/loss_scaler.h"
#include "train/schedule.h"

namespace gpudays {

// The boundaries of a step's parts, for timing them separately (the benchmark's composed timing).
// A micro-step spans its forward, backward and gradient reduction (all-reduce or reduce-scatter
// on the last micro-step; every micro-step at stage 2); the optimizer part spans unscaling and the
// overflow check, clipping, the update and the all-gather of updated weights.
enum class StepPhase { kMicroStepBegin, kMicroStepEnd, kOptimizerBegin, kOptimizerEnd };
using PhaseHook = std::function<void(StepPhase phase, int64_t micro_step)>;

struct EngineOptions {
  MethodSet methods;
  Precision precision = Precision::kFp32;
  int64_t grad_acc_steps = 1;
  double clip_grad_norm = 0.0;  // 0: no clipping
  AdamOptions adam;             // `fused` is set from methods.free_lunch
  ScheduleOptions schedule;
  LossScalerOptions loss_scaler;
  PhaseHook phase_hook;  // optional; micro_step is -1 for the optimizer phases
};

// The options a recipe and a method set imply.
EngineOptions engine_options(const RecipeSpec& recipe, const MethodSet& methods,
                             int64_t grad_acc_steps);

// The loss of micro-batch `index` (0 .. grad_acc_steps-1) of this rank, as a scalar tensor whose
// backward reaches the parameters.
using MicroLoss = std::function<at::Tensor(int64_t index)>;

struct StepResult {
  double loss = 0.0;       // mean over this rank's micro-batches
  double grad_norm = 0.0;  // global norm before clipping (0 when the step was skipped)
  double lr = 0.0;
  bool applied = true;     // false: an fp16 overflow skipped it
};

class Engine {
 public:
  // params: the model's fp32 parameters. Throws InputError for method sets it cannot run.
  Engine(std::vector<at::Tensor> params, Communicator& comm, EngineOptions options);
  ~Engine();

  StepResult step(const MicroLoss& micro_loss);
  int64_t steps() const { return steps_; }
  double loss_scale() const { return scaler_.scale(); }
  int64_t optimizer_state_bytes() const;  // on this rank
  int64_t shard_elements() const;         // parameters this rank updates

 private:
  struct Shards;
  void phase(StepPhase p, int64_t micro_step) const;
  double run_micro_steps(const MicroLoss& micro_loss);
  void reduce_micro_step(bool last);
  bool unscale_and_check_overflow();
  double clip();
  void apply_update(double lr);

  std::vector<at::Tensor> params_;
  Communicator& comm_;
  EngineOptions options_;
  LossScaler scaler_;
  std::unique_ptr<Shards> shards_;
  int64_t steps_ = 0;
};

}  // namespace gpudays
