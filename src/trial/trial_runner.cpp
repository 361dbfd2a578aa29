// The trial runner: whole-step, parts and the reference's timing of a trainable built as
// engine/apply_methods.h says, and around them the global-batch check, the memory cap,
// out-of-memory, the peak memory and the provenance of one trial.
#include "trial/trial_runner.h"

#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "common/checked_math.h"
#include "common/error.h"
#include "common/json_text.h"
#include "common/units.h"
#include "distributed/world.h"
#include "engine/apply_methods.h"
#include "engine/cpu_memory.h"
#include "engine/device.h"
#include "engine/engine.h"
#include "engine/trainable.h"
#include "trial/out_of_memory.h"
#include "trial/phase_clock.h"
#include "trial/step_loop.h"

namespace gpudays {
namespace {

// What timing a trial's steps needs.
struct TrialContext {
  const TrialSpec& spec;
  Communicator& comm;
  c10::Device device;
  Trainable& trainable;
  const EngineOptions& engine;
  int64_t global_batch;
};

// `timed` steps of `grad_acc_steps` micro-steps (and the spec's warm-up, more where a CUDA graph
// needs them); their wall seconds and how the micro-steps ran.
StepLoopResult time_steps(const TrialContext& c,
                          int64_t grad_acc_steps,
                          int64_t timed,
                          PhaseClock* clock = nullptr) {
  EngineOptions engine = c.engine;
  engine.grad_acc_steps = grad_acc_steps;
  return run_steps(c.trainable,
                   c.comm,
                   c.device,
                   engine,
                   {.warmup_steps = c.spec.warmup_steps,
                    .timed_steps = timed,
                    .micro_batch_size = c.spec.config.micro_batch_size,
                    .global_batch = c.global_batch,
                    .profile_path = c.spec.profile_path},
                   clock);
}

TrialMeasurement time_whole_steps(const TrialContext& c) {
  const StepLoopResult run = time_steps(c, c.spec.config.grad_acc_steps, c.spec.timed_steps);
  const Spread step = spread_of(run.seconds);
  TrialMeasurement r;
  r.status = TrialStatus::kOk;
  r.cuda_graph = run.cuda_graph;
  r.timing = StepTiming::kWhole;
  r.steps_timed = c.spec.timed_steps;
  r.step_time_median_s = step.median_s;
  r.step_time_min_s = step.min_s;
  r.step_time_max_s = step.max_s;
  take_slowest_rank(c.comm, {&r.step_time_median_s, &r.step_time_min_s, &r.step_time_max_s});
  return r;
}

// A parts measurement checked against whole steps: it agrees within kCompositionTolerance, or the
// whole steps are the result and the message says by how much they differ.
void check_composition(TrialMeasurement& r, const Spread& whole, int64_t whole_steps) {
  r.check_step_time_s = whole.median_s;
  if (composition_agrees(r.step_time_median_s, whole.median_s)) {
    r.timing_check = "agrees";
    return;
  }
  r.timing_check = "disagrees";
  r.message = fmt::format(
      "composed step {} differs from the whole step {} by {:+.1f}% (over {:.0f}%); the step time "
      "is the whole steps'",
      format_duration_s(r.step_time_median_s),
      format_duration_s(whole.median_s),
      100 * composition_error(r.step_time_median_s, whole.median_s),
      100 * kCompositionTolerance);
  r.steps_timed = whole_steps;
  r.step_time_median_s = whole.median_s;
  r.step_time_min_s = whole.min_s;
  r.step_time_max_s = whole.max_s;
}

// A successful measurement composed from parts.
TrialMeasurement composed_measurement(const ComposedStep& composed,
                                      StepTiming timing,
                                      int64_t steps_timed) {
  TrialMeasurement r;
  r.status = TrialStatus::kOk;
  r.timing = timing;
  r.steps_timed = steps_timed;
  r.step_time_median_s = composed.step.median_s;
  r.step_time_min_s = composed.step.min_s;
  r.step_time_max_s = composed.step.max_s;
  r.micro_step_time_s = composed.micro_s;
  r.last_micro_step_time_s = composed.last_micro_s;
  r.optimizer_time_s = composed.optimizer_s;
  return r;
}

// Parts: steps of min(accumulation, 2) micro-steps give a micro-step without gradient
// communication, the last one with it, and the optimizer; composed for the real accumulation.
// With check_steps, whole steps of the real accumulation are timed first to check the composition.
TrialMeasurement time_step_parts(const TrialContext& c) {
  const int64_t acc = c.spec.config.grad_acc_steps;
  Spread whole;
  if (c.spec.check_steps > 0) whole = spread_of(time_steps(c, acc, c.spec.check_steps).seconds);
  PhaseClock clock({.device = c.device, .grad_acc_steps = std::min<int64_t>(acc, 2), .now_s = {}});
  const std::string cuda_graph =
      time_steps(c, std::min<int64_t>(acc, 2), c.spec.timed_steps, &clock).cuda_graph;
  ComposedStep composed = compose_step(clock.parts(), acc);
  take_slowest_rank(c.comm,
                    {&composed.step.median_s,
                     &composed.step.min_s,
                     &composed.step.max_s,
                     &composed.micro_s,
                     &composed.last_micro_s,
                     &composed.optimizer_s,
                     &whole.median_s,
                     &whole.min_s,
                     &whole.max_s});
  TrialMeasurement r = composed_measurement(composed, StepTiming::kParts, c.spec.timed_steps);
  r.cuda_graph = cuda_graph;
  if (c.spec.check_steps > 0) check_composition(r, whole, c.spec.check_steps);
  return r;
}

// The reference benchmark's timing: steps of one micro-step each (at the real micro-batch, so
// with the gradient communication every step) and the optimizer, composed as accumulation x the
// micro-step + the optimizer (sweep/step_timing.h), on our synchronised clock.
TrialMeasurement time_reference_steps(const TrialContext& c) {
  PhaseClock clock({.device = c.device, .grad_acc_steps = 1, .now_s = {}});
  const std::string cuda_graph = time_steps(c, 1, c.spec.timed_steps, &clock).cuda_graph;
  ComposedStep composed = compose_reference_step(clock.parts(), c.spec.config.grad_acc_steps);
  take_slowest_rank(c.comm,
                    {&composed.step.median_s,
                     &composed.step.min_s,
                     &composed.step.max_s,
                     &composed.last_micro_s,
                     &composed.optimizer_s});
  TrialMeasurement r = composed_measurement(composed, StepTiming::kReference, c.spec.timed_steps);
  r.cuda_graph = cuda_graph;
  return r;
}

// Builds the model on the device and times it; out-of-memory is a result.
TrialMeasurement measure(const TrialSpec& spec,
                         const ModelSpec& model,
                         Communicator& comm,
                         c10::Device device) {
  return measure_or_out_of_memory(
      [&] {
        const MethodOptions options = trial_methods(spec, model, device);
        const std::unique_ptr<Trainable> trainable = make_trainable(model, options.trainable);
        const TrialContext c{
            spec, comm, device, *trainable, options.engine, model.recipe.global_batch};
        TrialMeasurement r = spec.timing == StepTiming::kWhole   ? time_whole_steps(c)
                             : spec.timing == StepTiming::kParts ? time_step_parts(c)
                                                                 : time_reference_steps(c);
        r.scan = trainable->scan_implementation();
        return r;
      },
      spec.timing);
}

void check_global_batch(const Configuration& config, int ranks, int64_t global_batch) {
  if (checked_product({config.micro_batch_size, config.grad_acc_steps, ranks}) == global_batch) {
    return;
  }
  throw InputError(
      fmt::format("micro-batch {} x accumulation {} x {} ranks is not the global batch {}",
                  config.micro_batch_size,
                  config.grad_acc_steps,
                  ranks,
                  global_batch));
}

}  // namespace

MethodOptions trial_methods(const TrialSpec& spec, const ModelSpec& model, c10::Device device) {
  return apply_methods(spec.config, model.recipe, device);
}

TrialRank join_trial(const std::string& device_name) {
  TrialRank rank;
  // A build without CUDA says so here; the rank's GPU is current before any CUDA work.
  rank.device = rank_device(
      parse_device(device_name), launched_with_several_ranks(), local_rank(), cuda_device_count());
  use_device(rank.device);
  rank.comm = make_communicator(rank.device.is_cpu() ? RankDevice::kCpu : RankDevice::kCuda,
                                rank.device.has_index() ? rank.device.index() : 0,
                                world_options_from_environment());
  return rank;
}

TrialMeasurement run_trial(const TrialSpec& spec,
                           const ModelSpec& model,
                           Communicator& comm,
                           c10::Device device) {
  check_global_batch(spec.config, comm.size(), model.recipe.global_batch);
  std::optional<CpuMemoryScope> cpu_memory;
  if (device.is_cpu()) {
    keep_freed_host_memory();
    cpu_memory.emplace(spec.memory_limit_bytes);
  } else {
    reset_peak_memory(device);
  }
  TrialMeasurement r = measure(spec, model, comm, device);
  r.device_name = device_name(device);
  r.driver = driver_version(device);
  r.torch_version = TORCH_VERSION;
  if (r.status == TrialStatus::kOutOfMemory && comm.size() > 1) {
    std::cout << json_text(to_json(r)) << std::endl;
    std::_Exit(3);
  }
  if (cpu_memory) {
    r.peak_memory_bytes = cpu_memory->stats().peak_bytes;
  } else {
    const DeviceMemoryStats stats = device_memory(device);
    r.peak_memory_bytes = stats.peak_allocated_bytes;
    r.peak_reserved_bytes = stats.peak_reserved_bytes;
  }
  // The largest rank's.
  comm.all_reduce(&r.peak_memory_bytes, 1, DType::kInt64, ReduceOp::kMax);
  comm.all_reduce(&r.peak_reserved_bytes, 1, DType::kInt64, ReduceOp::kMax);
  if (!device.is_cpu()) count_peak_over_limit_as_oom(r, spec.memory_limit_bytes);
  return r;
}

}  // namespace gpudays
