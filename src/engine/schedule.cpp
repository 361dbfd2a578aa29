// Schedules: HuggingFace's get_{cosine,linear,constant}_schedule_with_warmup shapes, with a floor;
// wsd as get_wsd_schedule with decay_type "linear" and min_lr_ratio = min_lr / lr.
#include "engine/schedule.h"

#include <algorithm>
#include <cmath>

namespace gpudays {

ScheduleOptions schedule_options(const RecipeSpec& recipe) {
  return ScheduleOptions{recipe.schedule,
                         recipe.lr,
                         recipe.min_lr,
                         recipe.warmup_steps,
                         recipe.train_steps,
                         recipe.decay_steps};
}

namespace {

// Stable at the peak until the last decay_steps, then linear to min_lr at total_steps.
double warmup_stable_decay(const ScheduleOptions& o, int64_t step) {
  const int64_t decay_start = o.total_steps - o.decay_steps;
  if (step < decay_start) return o.peak_lr;
  const double progress = std::min(1.0,
                                   static_cast<double>(step - decay_start) /
                                       static_cast<double>(std::max<int64_t>(1, o.decay_steps)));
  return o.min_lr + (o.peak_lr - o.min_lr) * (1.0 - progress);
}

}  // namespace

double learning_rate(const ScheduleOptions& o, int64_t step) {
  if (step < o.warmup_steps) {
    const double warmed =
        static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, o.warmup_steps));
    // get_wsd_schedule warms up from min_lr; the others from 0.
    const double start = o.kind == ScheduleKind::kWsd ? o.min_lr : 0.0;
    return start + (o.peak_lr - start) * warmed;
  }
  const double decay_steps =
      static_cast<double>(std::max<int64_t>(1, o.total_steps - o.warmup_steps));
  const double progress = std::min(1.0, static_cast<double>(step - o.warmup_steps) / decay_steps);
  switch (o.kind) {
    case ScheduleKind::kCosine:
      return o.min_lr + 0.5 * (o.peak_lr - o.min_lr) * (1.0 + std::cos(M_PI * progress));
    case ScheduleKind::kLinear:
      return o.min_lr + (o.peak_lr - o.min_lr) * (1.0 - progress);
    case ScheduleKind::kConstant:
      return o.peak_lr;
    case ScheduleKind::kWsd:
      return warmup_stable_decay(o, step);
  }
  return o.peak_lr;
}

}  // namespace gpudays
