// The timed step loop and the slowest-rank reduction.
#include "bench/step_loop.h"

#include <chrono>
#include <memory>

#include "bench/phase_clock.h"
#include "train/device.h"
#include "train/trainable.h"

namespace gpudays {

std::vector<double> run_steps(Trainable& trainable,
                              Communicator& comm,
                              c10::Device device,
                              EngineOptions engine,
                              const StepLoopOptions& options,
                              PhaseClock* clock) {
  using Clock = std::chrono::steady_clock;
  if (clock != nullptr) engine.phase_hook = clock->hook();
  const int64_t micro = options.micro_batch_size;
  const int64_t per_rank = micro * engine.grad_acc_steps;
  const std::unique_ptr<Engine> stepper = make_engine(trainable, comm, engine);
  std::vector<double> seconds;
  for (int64_t s = 0; s < options.warmup_steps + options.timed_steps; ++s) {
    const bool timed = s >= options.warmup_steps;
    if (clock != nullptr) clock->set_recording(timed);
    synchronize(device);
    const auto start = Clock::now();
    const auto first_sample = [&](int64_t i) {
      return s * options.global_batch + comm.rank() * per_rank + i * micro;
    };
    stepper->step(micro_batches(trainable, first_sample, micro));
    synchronize(device);
    if (timed) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  stepper->gather_parameters();  // stage 3: the next run starts from whole weights
  return seconds;
}

void take_slowest_rank(Communicator& comm, const std::vector<double*>& values) {
  std::vector<double> buffer;
  for (const double* v : values) buffer.push_back(*v);
  comm.all_reduce(buffer.data(), buffer.size(), DType::kFloat64, ReduceOp::kMax);
  for (size_t i = 0; i < values.size(); ++i) *values[i] = buffer[i];
}

}  // namespace gpudays
