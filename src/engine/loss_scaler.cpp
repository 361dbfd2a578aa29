// LossScaler state machine.
#include "engine/loss_scaler.h"

#include <algorithm>

namespace gpudays {

bool LossScaler::update(bool found_overflow) {
  if (found_overflow) {
    scale_ = std::max(options_.min_scale, scale_ * options_.backoff_factor);
    clean_steps_ = 0;
    ++skipped_;
    return false;
  }
  if (++clean_steps_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    clean_steps_ = 0;
  }
  return true;
}

}  // namespace gpudays
