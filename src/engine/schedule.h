// Learning-rate schedules of the recipes: linear warm-up, then cosine to a minimum, linear decay
// to a minimum, constant, or constant and then a linear decay at the end (wsd). Pure arithmetic;
// the engine sets the optimizer's rate from it.
#pragma once

#include <cstdint>

#include "catalog/model_spec.h"

namespace gpudays {

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::kConstant;
  double peak_lr = 0.0;
  double min_lr = 0.0;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  int64_t decay_steps = 0;  // wsd: the final linear decay
  bool operator==(const ScheduleOptions&) const = default;
};

ScheduleOptions schedule_options(const RecipeSpec& recipe);

// The rate for optimizer step `step` (0-based): step / warmup x peak during warm-up (as
// HuggingFace's schedulers; wsd from min_lr to peak, as get_wsd_schedule), then the decay; never
// below min_lr after warm-up.
double learning_rate(const ScheduleOptions& options, int64_t step);

}  // namespace gpudays
