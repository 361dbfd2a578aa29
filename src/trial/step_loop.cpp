// The timed step loop and the slowest-rank reduction.
#include "trial/step_loop.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "engine/cuda_graph.h"
#include "engine/device.h"
#include "engine/trainable.h"
#include "trial/kernel_profile.h"
#include "trial/phase_clock.h"

namespace gpudays {

int64_t warmup_steps_for(int64_t requested,
                         int64_t micro_steps_before_replay,
                         int64_t grad_acc_steps) {
  const int64_t for_graph = (micro_steps_before_replay + grad_acc_steps - 1) / grad_acc_steps;
  return std::max(requested, for_graph);
}

namespace {

// How the timed micro-steps ran, from the graph's counts before and after them.
std::string graph_use(const MicroStepGraph* graph, const GraphCounts& before, int64_t micro_steps) {
  if (graph == nullptr) return "";
  if (graph->fell_back()) return "eager: " + graph->fallback_reason();
  const int64_t replays = graph->counts().replays - before.replays;
  return replays == micro_steps ? "replayed" : "mixed";
}

// Each rank's profile apart: PATH on one rank, PATH.rankN on several.
std::string profile_path_of(const std::string& path, const Communicator& comm) {
  return comm.size() > 1 ? path + ".rank" + std::to_string(comm.rank()) : path;
}

}  // namespace

StepLoopResult run_steps(Trainable& trainable,
                         Communicator& comm,
                         c10::Device device,
                         EngineOptions engine,
                         const StepLoopOptions& options,
                         PhaseClock* clock) {
  using Clock = std::chrono::steady_clock;
  if (clock != nullptr) engine.phase_hook = clock->hook();
  const int64_t micro = options.micro_batch_size;
  const int64_t acc = engine.grad_acc_steps;
  const std::unique_ptr<Engine> stepper = make_engine(trainable, comm, engine);
  const MicroStepGraph* graph = stepper->micro_step_graph();
  StepLoopResult result;
  result.warmup_steps = warmup_steps_for(
      options.warmup_steps, graph != nullptr ? graph->micro_steps_before_replay() : 0, acc);
  GraphCounts before;
  std::unique_ptr<KernelProfile> profile;  // prepared a step ahead, recording the timed steps
  const int64_t prepare_at = std::max<int64_t>(result.warmup_steps - 1, 0);
  for (int64_t s = 0; s < result.warmup_steps + options.timed_steps; ++s) {
    const bool timed = s >= result.warmup_steps;
    if (s == result.warmup_steps && graph != nullptr) before = graph->counts();
    if (s == prepare_at && !options.profile_path.empty()) {
      profile =
          std::make_unique<KernelProfile>(profile_path_of(options.profile_path, comm), device);
    }
    if (s == result.warmup_steps && profile) profile->start();
    if (clock != nullptr) clock->set_recording(timed);
    synchronize(device);
    const auto start = Clock::now();
    const auto first_sample = [&](int64_t i) {
      return s * options.global_batch + comm.rank() * micro * acc + i * micro;
    };
    stepper->step(micro_batches(trainable, first_sample, micro));
    synchronize(device);
    if (timed)
      result.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (profile) profile->finish(options.timed_steps);
  result.cuda_graph = graph_use(graph, before, options.timed_steps * acc);
  stepper->gather_parameters();  // stage 3: the next run starts from whole weights
  return result;
}

void take_slowest_rank(Communicator& comm, const std::vector<double*>& values) {
  std::vector<double> buffer;
  for (const double* v : values) buffer.push_back(*v);
  comm.all_reduce(buffer.data(), buffer.size(), DType::kFloat64, ReduceOp::kMax);
  for (size_t i = 0; i < values.size(); ++i) *values[i] = buffer[i];
}

}  // namespace gpudays
