// The timed step loop: optimizer steps of a trainable on its synthetic data, warm-up first, the
// device synchronised before every clock read; and the reduction of every rank's figures to the
// slowest rank's. What to time and how to compose it is the trial runner's (trial/trial_runner.h).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distributed/communicator.h"
#include "engine/engine.h"

namespace gpudays {

class PhaseClock;
class Trainable;

struct StepLoopOptions {
  int64_t warmup_steps = 1;  // untimed, first; more where a CUDA graph needs them (below)
  int64_t timed_steps = 3;
  int64_t micro_batch_size = 1;  // samples per rank per micro-step
  // Samples per optimizer step over every rank: step s of rank r starts at sample
  // s * global_batch + r * micro_batch_size * grad_acc_steps.
  int64_t global_batch = 1;
  std::string profile_path;  // "": none; else the timed steps' profile (trial/kernel_profile.h)
};

struct StepLoopResult {
  std::vector<double> seconds;  // each timed step's wall seconds on this rank
  int64_t warmup_steps = 0;     // as run
  std::string cuda_graph;       // how the timed micro-steps ran (TrialMeasurement::cuda_graph)
};

// Warm-up steps so that the timed steps' micro-steps are all replays: at least `requested`, and
// enough steps of `grad_acc_steps` micro-steps to cover `micro_steps_before_replay` (0: no graph).
int64_t warmup_steps_for(int64_t requested,
                         int64_t micro_steps_before_replay,
                         int64_t grad_acc_steps);

// Builds an engine for `trainable` from `engine` (its phase hook set to `clock`'s when one is
// given, recording only the timed steps), runs the steps of engine.grad_acc_steps micro-steps, and
// returns the timed steps' wall seconds on this rank. Leaves the trainable's weights whole.
StepLoopResult run_steps(Trainable& trainable,
                         Communicator& comm,
                         c10::Device device,
                         EngineOptions engine,
                         const StepLoopOptions& options,
                         PhaseClock* clock = nullptr);

// Every rank's figures become the slowest rank's (a step waits for it): the maximum over ranks,
// in place. A collective: every rank calls it with the same number of figures.
void take_slowest_rank(Communicator& comm, const std::vector<double*>& values);

}  // namespace gpudays
