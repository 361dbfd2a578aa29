// Schedules: HuggingFace's get_{cosine,linear,constant}_schedule_with_warmup shapes, with a floor.
#include "engine/schedule.h"

#include <algorithm>
#include <cmath>

namespace gpudays {

ScheduleOptions schedule_options(const RecipeSpec& recipe) {
  return ScheduleOptions{
      recipe.schedule, recipe.lr, recipe.min_lr, recipe.warmup_steps, recipe.train_steps};
}

double learning_rate(const ScheduleOptions& o, int64_t step) {
  if (step < o.warmup_steps) {
    return o.peak_lr * static_cast<double>(step) /
           static_cast<double>(std::max<int64_t>(1, o.warmup_steps));
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
  }
  return o.peak_lr;
}

}  // namespace gpudays
