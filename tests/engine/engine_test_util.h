// The small model the engine's tests train (an MLP of two blocks on a fixed global dataset) and the
// training loop they share, which can record each step's pre-clipping gradient norm and this rank's
// reduced gradient (Engine::local_gradients at the optimizer's start) for comparison with one
// process. Used by engine_test.cpp (one rank) and engine_mpi_test.cpp (2 and 4 ranks).
#pragma once

#include <torch/nn/modules/linear.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "distributed/communicator.h"
#include "engine/cpu_memory.h"
#include "engine/engine.h"
#include "plan/memory_model.h"

namespace gpudays::engine_test {

constexpr int64_t kGlobalBatch = 16;

// Two blocks (tanh(in x), then out h) run through a block runner, as a model's trunk runs them.
struct Mlp {
  int64_t width_in, width_out;
  torch::nn::Linear in{nullptr};
  torch::nn::Linear out{nullptr};
  models::BlockRunner runner;
  explicit Mlp(int64_t width_in = 8, int64_t hidden = 16, int64_t width_out = 4)
      : width_in(width_in), width_out(width_out) {
    at::manual_seed(3);
    in = torch::nn::Linear(width_in, hidden);
    out = torch::nn::Linear(hidden, width_out);
  }
  std::vector<at::Tensor> params() { return {in->weight, in->bias, out->weight, out->bias}; }
  models::BlockParameters blocks() { return {{in->weight, in->bias}, {out->weight, out->bias}}; }
  // The global dataset: sample i is the same whichever micro-batch or rank draws it.
  // -> loss: [] (mean squared error over the samples)
  at::Tensor loss(int64_t first_sample, int64_t count) {
    std::vector<at::Tensor> xs, ys;
    for (int64_t i = first_sample; i < first_sample + count; ++i) {
      at::manual_seed(1000 + i);
      xs.push_back(at::randn({width_in}));
      ys.push_back(at::randn({width_out}));
    }
    const at::Tensor x = at::stack(xs), y = at::stack(ys);
    auto first = [this](const at::Tensor& h) { return at::tanh(in->forward(h)); };
    auto second = [this](const at::Tensor& h) { return out->forward(h); };
    const at::Tensor h = models::run_block(runner, 0, first, x);
    return (models::run_block(runner, 1, second, h) - y).pow(2).mean();
  }
};

// What a run leaves: the final parameters and, per step, the pre-clipping norm and this rank's
// reduced gradient (unscaled; one flat fp32 tensor per parameter, zero outside the pieces this rank
// holds) with the number of elements it holds.
struct TrainingRun {
  std::vector<at::Tensor> params;
  std::vector<double> grad_norms;
  std::vector<std::vector<at::Tensor>> gradients;
  std::vector<int64_t> held_elements;
};

// Trains `steps` steps; rank r takes samples [r * per_rank, (r + 1) * per_rank) of each step's
// global batch, in `acc` micro-batches.
inline TrainingRun train_run(Mlp& m, Communicator& comm, EngineOptions o, int steps) {
  TrainingRun run;
  const Engine* engine_seen = nullptr;
  o.phase_hook = [&](StepPhase phase, int64_t) {
    if (phase != StepPhase::kOptimizerBegin) return;
    std::vector<at::Tensor> flat;
    for (const at::Tensor& p : m.params()) flat.push_back(at::zeros({p.numel()}, at::kFloat));
    int64_t held = 0;
    for (const GradientPiece& g : engine_seen->local_gradients()) {
      flat[g.param].narrow(0, g.offset, g.values.numel()).copy_(g.values);
      held += g.values.numel();
    }
    const double scale = o.precision == Precision::kFp16 ? engine_seen->loss_scale() : 1.0;
    for (at::Tensor& f : flat) f.div_(scale);
    run.gradients.push_back(std::move(flat));
    run.held_elements.push_back(held);
  };
  Engine engine(m.params(), comm, o, m.blocks());
  engine_seen = &engine;
  m.runner = engine.block_runner({});
  const int64_t per_rank = kGlobalBatch / comm.size();
  const int64_t micro = per_rank / o.grad_acc_steps;
  for (int s = 0; s < steps; ++s) {
    const StepResult r = engine.step([&](int64_t i) {
      return m.loss(s * kGlobalBatch + comm.rank() * per_rank + i * micro, micro);
    });
    run.grad_norms.push_back(r.grad_norm);
  }
  engine.gather_parameters();
  for (const at::Tensor& p : m.params()) run.params.push_back(p.detach().to(at::kFloat).clone());
  return run;
}

inline std::vector<at::Tensor> train(Mlp& m, Communicator& comm, EngineOptions o, int steps) {
  return train_run(m, comm, std::move(o), steps).params;
}

inline EngineOptions base_options(int64_t acc) {
  EngineOptions o;
  o.grad_acc_steps = acc;
  o.adam = AdamOptions{0.9, 0.95, 1e-8, 0.1, true, false};
  o.schedule = ScheduleOptions{ScheduleKind::kConstant, 1e-2, 0.0, 0, 10};
  return o;
}

inline double max_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

// One process on the whole global batch in one micro-batch.
inline TrainingRun reference_run(EngineOptions o, int steps) {
  auto single = make_single_process_communicator();
  Mlp m;
  o.grad_acc_steps = 1;
  return train_run(m, *single, o, steps);
}

inline std::vector<at::Tensor> reference(EngineOptions o, int steps) {
  return reference_run(std::move(o), steps).params;
}

// Live bytes at the optimizer of the second step (after backward: weights, gradients, masters
// and Adam state, no activations) of a wide MLP (about 0.4 M parameters), and the planner's
// formula.
struct ModelState {
  double measured_bytes = 0.0;
  double formula_bytes = 0.0;
};
inline ModelState model_state(Communicator& comm, Sharding sharding, Precision precision) {
  CpuMemoryScope scope;
  Mlp m(512, 512, 256);
  double params = 0.0;
  for (const at::Tensor& p : m.params()) params += static_cast<double>(p.numel());
  EngineOptions o = base_options(1);
  o.sharding = sharding;
  o.offload = false;
  o.precision = precision;
  int64_t live = 0;
  int64_t step = 0;
  o.phase_hook = [&](StepPhase p, int64_t) {
    if (p == StepPhase::kOptimizerBegin && step == 1) live = scope.stats().live_bytes;
  };
  Engine engine(m.params(), comm, o, m.blocks());
  m.runner = engine.block_runner({});
  const int64_t per_rank = kGlobalBatch / comm.size();
  for (step = 0; step < 2; ++step) {
    engine.step([&](int64_t) { return m.loss(comm.rank() * per_rank, per_rank); });
  }
  const MemoryBreakdown f = model_state_memory(params, precision, sharding, false, comm.size());
  return {static_cast<double>(live), f.model_state_bytes()};
}

}  // namespace gpudays::engine_test
