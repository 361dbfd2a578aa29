// Dynamic loss scaling for fp16 mixed precision (Micikevicius et al. 2018, "Mixed Precision
// Training"; the policy of PyTorch's GradScaler): multiply the loss by the scale; if any gradient
// overflowed, skip the step and back the scale off; after `growth_interval` clean steps, grow it.
#pragma once

#include <cstdint>

namespace gpudays {

struct LossScalerOptions {
  double initial_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  double min_scale = 1.0;
  bool operator==(const LossScalerOptions&) const = default;
};

// What a checkpoint keeps of the scaler.
struct LossScalerState {
  double scale = 0.0;
  int64_t clean_steps = 0;
  int64_t skipped = 0;
  bool operator==(const LossScalerState&) const = default;
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {})
      : options_(options), scale_(options.initial_scale) {}

  double scale() const { return scale_; }
  // Records the outcome of one optimizer step; returns whether the step should be applied.
  bool update(bool found_overflow);
  int64_t skipped_steps() const { return skipped_; }
  LossScalerState state() const { return {scale_, clean_steps_, skipped_}; }
  void restore(const LossScalerState& s) {
    scale_ = s.scale;
    clean_steps_ = s.clean_steps;
    skipped_ = s.skipped;
  }

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t clean_steps_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace gpudays
