// What a step time means, derived in this one place: samples and tokens per second, the recipe's
// training days and GPU-days, MFU and HFU (PaLM's definitions: model FLOPs, and model plus
// recomputed FLOPs, over the GPUs' dense peak for the matmul dtype). The planner, the sweep's
// stored trials and the trainer's log all derive them here.
#pragma once

#include <cstdint>

namespace gpudays {

// The work of one optimizer step, independent of how long it takes.
struct StepWork {
  double samples = 0.0;            // the global batch
  double tokens_per_sample = 0.0;  // sequence length (patches for images)
  double model_flops = 0.0;        // per step: the model's, attention counted whole
  double recompute_flops = 0.0;    // per step: what activation checkpointing recomputes
  double train_steps = 0.0;        // the recipe's optimizer steps
  double gpus = 1.0;
  double peak_flops_per_gpu = 0.0;  // 0: unknown (MFU and HFU stay 0)
  bool operator==(const StepWork&) const = default;
};

struct StepFigures {
  double samples_per_s = 0.0;
  double tokens_per_s = 0.0;
  double training_days = 0.0;  // the recipe's steps at this step time
  double gpu_days = 0.0;
  double mfu = 0.0;
  double hfu = 0.0;
};

// `step_time_s` must be positive.
StepFigures step_figures(const StepWork& work, double step_time_s);

}  // namespace gpudays
