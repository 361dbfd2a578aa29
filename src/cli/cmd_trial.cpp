// `gpudays trial --spec FILE`: one benchmark trial, run by a sweep in its own process (under
// mpirun for several ranks), on the CPU or a CUDA GPU. Builds the model on the device and the
// engine, runs warm-up steps, then times whole optimizer steps or the parts of a step composed into
// one (bench/step_timing.h), synchronising the device before every clock read, and prints one JSON
// result line. `gpudays trial --check-device NAME` says whether this build can run trials there.
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "bench/step_timing.h"
#include "bench/trial_spec.h"
#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/units.h"
#include "dist/communicator.h"
#include "train/apply_methods.h"
#include "train/cpu_memory.h"
#include "train/device.h"
#include "train/engine.h"
#include "train/trainable.h"

namespace gpudays {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double>(end - begin).count();
}

// What running steps needs.
struct TrialContext {
  const TrialSpec& spec;
  const ModelSpec& model;
  Communicator& comm;
  c10::Device device;
  Trainable& trainable;
};

// Collects the durations of a step's parts from the engine's phase hook, synchronising the device
// at every boundary; only while `recording` (the timed steps).
class PhaseClock {
 public:
  PhaseClock(c10::Device device, int64_t grad_acc_steps)
      : device_(device), grad_acc_steps_(grad_acc_steps) {}

  void on_phase(StepPhase phase, int64_t micro_step) {
    synchronize(device_);
    const auto now = Clock::now();
    if (phase == StepPhase::kMicroStepBegin || phase == StepPhase::kOptimizerBegin) {
      begin_ = now;
      return;
    }
    if (!recording) return;
    const double seconds = seconds_between(begin_, now);
    if (phase == StepPhase::kOptimizerEnd) {
      parts.optimizer_s.push_back(seconds);
    } else if (micro_step + 1 == grad_acc_steps_) {
      parts.last_micro_s.push_back(seconds);
    } else {
      parts.micro_s.push_back(seconds);
    }
  }

  bool recording = false;
  PartTimes parts;

 private:
  c10::Device device_;
  int64_t grad_acc_steps_;
  Clock::time_point begin_;
};

// Runs the warm-up steps, then `timed` steps, of an engine with `grad_acc_steps` micro-steps;
// returns each timed step's wall seconds. With a clock, the engine reports its phases to it.
std::vector<double> run_steps(const TrialContext& c,
                              int64_t grad_acc_steps,
                              int64_t timed,
                              PhaseClock* clock) {
  Configuration config = c.spec.config;
  config.grad_acc_steps = grad_acc_steps;
  EngineOptions options = apply_methods(config, c.model.recipe, c.device).engine;
  if (clock != nullptr) {
    options.phase_hook = [clock](StepPhase p, int64_t i) { clock->on_phase(p, i); };
  }
  const std::unique_ptr<Engine> engine = make_engine(c.trainable, c.comm, options);
  const int64_t global = c.model.recipe.global_batch;
  const int64_t micro = c.spec.config.micro_batch_size;
  const int64_t per_rank = micro * grad_acc_steps;
  std::vector<double> seconds;
  for (int64_t s = 0; s < c.spec.warmup_steps + timed; ++s) {
    if (clock != nullptr) clock->recording = s >= c.spec.warmup_steps;
    synchronize(c.device);
    const auto start = Clock::now();
    const auto first_sample = [&](int64_t i) {
      return s * global + c.comm.rank() * per_rank + i * micro;
    };
    engine->step(micro_batches(c.trainable, first_sample, micro));
    synchronize(c.device);
    if (s >= c.spec.warmup_steps) seconds.push_back(seconds_between(start, Clock::now()));
  }
  engine->gather_parameters();  // stage 3: the next run starts from whole weights
  return seconds;
}

// Every rank's figures become the slowest rank's (the step waits for it).
void take_slowest_rank(Communicator& comm, std::vector<double*> values) {
  std::vector<double> buffer;
  for (const double* v : values) buffer.push_back(*v);
  comm.all_reduce(
      buffer.data(), static_cast<int64_t>(buffer.size()), DType::kFloat64, ReduceOp::kMax);
  for (size_t i = 0; i < values.size(); ++i) *values[i] = buffer[i];
}

TrialMeasurement time_whole_steps(const TrialContext& c) {
  const Spread step = spread_of(run_steps(c, c.spec.config.grad_acc_steps, c.spec.timed_steps, nullptr));
  TrialMeasurement r;
  r.status = TrialStatus::kOk;
  r.timing = StepTiming::kWhole;
  r.steps_timed = c.spec.timed_steps;
  r.step_time_median_s = step.median_s;
  r.step_time_min_s = step.min_s;
  r.step_time_max_s = step.max_s;
  take_slowest_rank(c.comm, {&r.step_time_median_s, &r.step_time_min_s, &r.step_time_max_s});
  return r;
}

// Parts: steps of min(accumulation, 2) micro-steps give a micro-step without gradient
// communication, the last one with it, and the optimizer; composed for the real accumulation.
// With check_steps, whole steps of the real accumulation are timed first to check the composition;
// when they disagree, they are the result.
TrialMeasurement time_step_parts(const TrialContext& c) {
  const int64_t acc = c.spec.config.grad_acc_steps;
  Spread whole;
  if (c.spec.check_steps > 0) whole = spread_of(run_steps(c, acc, c.spec.check_steps, nullptr));
  PhaseClock clock(c.device, std::min<int64_t>(acc, 2));
  run_steps(c, std::min<int64_t>(acc, 2), c.spec.timed_steps, &clock);
  ComposedStep composed = compose_step(clock.parts, acc);
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
  TrialMeasurement r;
  r.status = TrialStatus::kOk;
  r.timing = StepTiming::kParts;
  r.steps_timed = c.spec.timed_steps;
  r.step_time_median_s = composed.step.median_s;
  r.step_time_min_s = composed.step.min_s;
  r.step_time_max_s = composed.step.max_s;
  r.micro_step_time_s = composed.micro_s;
  r.last_micro_step_time_s = composed.last_micro_s;
  r.optimizer_time_s = composed.optimizer_s;
  if (c.spec.check_steps == 0) return r;
  r.check_step_time_s = whole.median_s;
  if (composition_agrees(composed.step.median_s, whole.median_s)) {
    r.timing_check = "agrees";
    return r;
  }
  r.timing_check = "disagrees";
  r.message = fmt::format(
      "composed step {} differs from the whole step {} by {:+.1f}% (over "
      "{:.0f}%); the step time is the whole steps'",
      format_duration_s(composed.step.median_s),
      format_duration_s(whole.median_s),
      100 * composition_error(composed.step.median_s, whole.median_s),
      100 * kCompositionTolerance);
  r.steps_timed = c.spec.check_steps;
  r.step_time_median_s = whole.median_s;
  r.step_time_min_s = whole.min_s;
  r.step_time_max_s = whole.max_s;
  return r;
}

// Builds the model on the device and times it; out-of-memory (CUDA's, or the CPU cap's) is a
// result, "oom".
TrialMeasurement measure(const TrialSpec& spec,
                    const ModelSpec& model,
                    Communicator& comm,
                    c10::Device device) {
  try {
    auto trainable = make_trainable(model, apply_methods(spec.config, model.recipe, device).trainable);
    const TrialContext c{spec, model, comm, device, *trainable};
    return spec.timing == StepTiming::kWhole ? time_whole_steps(c) : time_step_parts(c);
  } catch (const c10::OutOfMemoryError& e) {
    TrialMeasurement r;
    r.status = TrialStatus::kOutOfMemory;
    r.timing = spec.timing;
    r.message = std::string(e.what_without_backtrace()).substr(0, 200);
    return r;
  }
}

// Runs the trial; rank 0 prints the result line.
void run_trial(const GlobalOptions& global, const TrialSpec& spec) {
  c10::Device device = parse_device(spec.device);  // a build without CUDA says so here
  const ModelSpec model = spec.model_file.empty()
                              ? Catalog::load({global.config_dir}).model(spec.model)
                              : load_model_file(spec.model_file);
  // Several ranks: MPI on the CPU; on CUDA, one GPU per rank of a node and NCCL bootstrapped
  // over MPI.
  std::unique_ptr<Communicator> bootstrap;
  std::unique_ptr<Communicator> comm;
  if (!launched_with_several_ranks()) {
    comm = make_single_process_communicator();
  } else if (device.is_cpu()) {
    comm = make_mpi_communicator();
  } else {
    device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(local_rank()));
    bootstrap = make_mpi_communicator();
    comm = make_nccl_communicator(*bootstrap, device.index());
  }
  if (spec.config.micro_batch_size * spec.config.grad_acc_steps * comm->size() != model.recipe.global_batch) {
    throw InputError(
        fmt::format("micro-batch {} x accumulation {} x {} ranks is not the global "
                    "batch {}",
                    spec.config.micro_batch_size,
                    spec.config.grad_acc_steps,
                    comm->size(),
                    model.recipe.global_batch));
  }
  std::optional<CpuMemoryScope> cpu_memory;
  if (device.is_cpu()) {
    cpu_memory.emplace(spec.memory_limit_bytes);
  } else {
    reset_peak_memory(device);
  }
  TrialMeasurement r = measure(spec, model, *comm, device);
  r.device_name = device_name(device);
  r.driver = driver_version(device);
  r.torch_version = TORCH_VERSION;
  if (r.status == TrialStatus::kOutOfMemory && comm->size() > 1) {
    // The other ranks may wait in a collective this rank will never join: report, then end the
    // job (the launcher stops the other ranks when one exits with an error).
    std::cout << to_json(r).dump() << std::endl;
    std::_Exit(3);
  }
  r.peak_memory_bytes =
      cpu_memory ? cpu_memory->stats().peak_bytes : device_memory(device).peak_allocated_bytes;
  int64_t peak = r.peak_memory_bytes;  // the largest rank's
  comm->all_reduce(&peak, 1, DType::kInt64, ReduceOp::kMax);
  r.peak_memory_bytes = peak;
  // A CUDA device is not capped; a peak over the requested limit counts as out-of-memory.
  if (!device.is_cpu() && spec.memory_limit_bytes > 0 && r.status == TrialStatus::kOk &&
      peak > spec.memory_limit_bytes) {
    r.status = TrialStatus::kOutOfMemory;
    r.message = fmt::format("peak {} over the memory limit {}",
                            format_gib(static_cast<double>(peak)),
                            format_gib(static_cast<double>(spec.memory_limit_bytes)));
  }
  if (comm->rank() == 0) std::cout << to_json(r).dump() << "\n";
}

}  // namespace

void add_trial_command(CLI::App& app, const GlobalOptions& global) {
  auto spec_path = std::make_shared<std::string>();
  auto check_device = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "trial", "Run one benchmark trial from a specification file (used by `gpudays bench`)");
  CLI::Option* spec =
      cmd->add_option("--spec", *spec_path, "Trial specification (JSON)")->check(CLI::ExistingFile);
  cmd->add_option("--check-device",
                  *check_device,
                  "Only check that trials can run on this device (cpu, cuda, cuda:N) and print "
                  "its name")
      ->excludes(spec);
  cmd->callback([&global, spec_path, check_device] {
    if (!check_device->empty()) {
      std::cout << device_name(parse_device(*check_device)) << "\n";
      return;
    }
    if (spec_path->empty()) throw InputError("trial needs --spec FILE (or --check-device NAME)");
    std::ifstream in(*spec_path);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: not valid JSON ({})", *spec_path, e.what()));
    }
    run_trial(global, trial_spec_from_json(j));
  });
}

}  // namespace gpudays
