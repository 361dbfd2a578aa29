// The phase clock: a part begins at a micro-step's or the optimizer's begin boundary and ends at
// the next end boundary; which part it is follows from the boundary and the micro-step's index.
#include "trial/phase_clock.h"

#include <chrono>

#include "common/error.h"
#include "engine/device.h"

namespace gpudays {

PhaseClock::PhaseClock(PhaseClockOptions options) : options_(std::move(options)) {
  if (options_.grad_acc_steps < 1)
    throw InputError("a phase clock needs accumulation of 1 or more");
  if (!options_.now_s) {
    options_.now_s = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
}

void PhaseClock::on_phase(StepPhase phase, int64_t micro_step) {
  synchronize(options_.device);
  const double now_s = options_.now_s();
  if (phase == StepPhase::kMicroStepBegin || phase == StepPhase::kOptimizerBegin) {
    begin_s_ = now_s;
    return;
  }
  if (!recording_) return;
  const double seconds = now_s - begin_s_;
  if (phase == StepPhase::kOptimizerEnd) {
    parts_.optimizer_s.push_back(seconds);
  } else if (micro_step + 1 == options_.grad_acc_steps) {
    parts_.last_micro_s.push_back(seconds);
  } else {
    parts_.micro_s.push_back(seconds);
  }
}

PhaseHook PhaseClock::hook() {
  return [this](StepPhase phase, int64_t micro_step) { on_phase(phase, micro_step); };
}

}  // namespace gpudays
