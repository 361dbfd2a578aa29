// The figures of a step time.
#include "plan/step_figures.h"

#include "common/units.h"

namespace gpudays {

StepFigures step_figures(const StepWork& work, double step_time_s) {
  StepFigures f;
  f.samples_per_s = work.samples / step_time_s;
  f.tokens_per_s = f.samples_per_s * work.tokens_per_sample;
  f.training_days = work.train_steps * step_time_s / kSecondsPerDay;
  f.gpu_days = f.training_days * work.gpus;
  if (work.peak_flops_per_gpu > 0.0) {
    const double capacity = step_time_s * work.gpus * work.peak_flops_per_gpu;
    f.mfu = work.model_flops / capacity;
    f.hfu = (work.model_flops + work.recompute_flops) / capacity;
  }
  return f;
}

}  // namespace gpudays
