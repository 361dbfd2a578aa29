// The clock of a step's parts: turns the engine's phase boundaries (engine/engine.h, StepPhase)
// into the durations of a micro-step, the last micro-step and the optimizer (sweep/step_timing.h),
// synchronising the device at every boundary. Composing them into a step is step_timing's.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>

#include "engine/engine.h"
#include "sweep/step_timing.h"

namespace gpudays {

struct PhaseClockOptions {
  c10::Device device = c10::kCPU;  // synchronised before every clock read
  int64_t grad_acc_steps = 1;      // micro-steps per step: the last one is timed apart
  // Seconds on a monotonic clock; empty: std::chrono::steady_clock.
  std::function<double()> now_s;
};

class PhaseClock {
 public:
  explicit PhaseClock(PhaseClockOptions options);

  // One boundary (micro_step: -1 for the optimizer's); records the part it ends while recording.
  void on_phase(StepPhase phase, int64_t micro_step);
  // on_phase as the engine's phase hook; the clock must outlive the engine.
  PhaseHook hook();

  void set_recording(bool recording) { recording_ = recording; }  // off for warm-up steps
  const PartTimes& parts() const { return parts_; }

 private:
  PhaseClockOptions options_;
  bool recording_ = false;
  double begin_s_ = 0.0;
  PartTimes parts_;
};

}  // namespace gpudays
