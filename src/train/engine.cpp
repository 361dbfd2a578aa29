// Engine: micro-steps, reduction per sharding stage, unscale/overflow, clipping, sharded update.
#include "train/engine.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "plan/search_space.h"

namespace gpudays {
namespace {

int64_t numel_of(const std::vector<at::Tensor>& params) {
  int64_t n = 0;
  for (const at::Tensor& p : params) n += p.numel();
  return n;
}

// All gradients as one flat fp32 buffer of `padded` elements (missing gradients and padding: 0).
at::Tensor flatten_grads(const std::vector<at::Tensor>& params, int64_t padded) {
  at::Tensor flat = at::zeros({padded}, params.front().options().dtype(at::kFloat));
  int64_t offset = 0;
  for (const at::Tensor& p : params) {
    if (p.grad().defined()) flat.narrow(0, offset, p.numel()).copy_(p.grad().reshape(-1));
    offset += p.numel();
  }
  return flat;
}

void unflatten_into(const at::Tensor& flat, std::vector<at::Tensor>& targets) {
  int64_t offset = 0;
  for (at::Tensor& t : targets) {
    t.copy_(flat.narrow(0, offset, t.numel()).view_as(t));
    offset += t.numel();
  }
}

// The search space's validity rules (plan/search_space.h), plus what the engine lacks so far.
void check_methods(const MethodSet& m, int world) {
  const std::string problem = method_set_problem(m, Cluster{nullptr, 1, world});
  if (!problem.empty()) throw InputError(problem);
  if (sharding_stage(m.sharding) == 3) {
    throw InputError(fmt::format("{} (stage 3) is not implemented by the engine yet",
                                 to_string(m.sharding)));
  }
}

}  // namespace

// This rank's slice of the flat parameters, its optimizer and its reduced gradient (stage >= 1).
struct Engine::Shards {
  int64_t total = 0;
  int64_t padded = 0;
  int64_t size = 0;   // elements per rank
  int64_t begin = 0;  // this rank's first element
  at::Tensor grad;    // stage 0: the full flat gradient; else this rank's reduced shard
  at::Tensor master;  // stage >= 1: this rank's fp32 weights (on the CPU when offloading)
  std::unique_ptr<Adam> adam;
};

EngineOptions engine_options(const RecipeSpec& recipe, const MethodSet& methods,
                             int64_t grad_acc_steps) {
  EngineOptions o;
  o.methods = methods;
  o.precision = recipe.precision;
  o.grad_acc_steps = grad_acc_steps;
  o.clip_grad_norm = recipe.clip_grad_norm;
  o.adam = adam_options(recipe, methods.free_lunch);
  o.schedule = schedule_options(recipe);
  return o;
}

Engine::Engine(std::vector<at::Tensor> params, Communicator& comm, EngineOptions options)
    : params_(std::move(params)), comm_(comm), options_(options), scaler_(options.loss_scaler),
      shards_(std::make_unique<Shards>()) {
  check_methods(options_.methods, comm_.size());
  if (params_.empty()) throw InputError("the model has no parameters");
  if (options_.grad_acc_steps < 1) throw InputError("gradient accumulation must be >= 1");
  options_.adam.fused = options_.methods.free_lunch;
  Shards& s = *shards_;
  const int64_t world = comm_.size();
  s.total = numel_of(params_);
  s.padded = (s.total + world - 1) / world * world;
  s.size = s.padded / world;
  s.begin = comm_.rank() * s.size;
  if (options_.methods.sharding == Sharding::kNone) {
    s.adam = std::make_unique<Adam>(params_, options_.adam);
    return;
  }
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> flat_parts;
  for (const at::Tensor& p : params_) flat_parts.push_back(p.detach().reshape(-1).to(at::kFloat));
  at::Tensor flat = at::cat(flat_parts);
  flat = at::constant_pad_nd(flat, {0, s.padded - s.total});
  s.master = flat.narrow(0, s.begin, s.size).clone();
  if (options_.methods.offloading) s.master = s.master.to(at::kCPU);
  s.adam = std::make_unique<Adam>(std::vector<at::Tensor>{s.master}, options_.adam);
}

Engine::~Engine() = default;

int64_t Engine::optimizer_state_bytes() const { return shards_->adam->state_bytes(); }

int64_t Engine::shard_elements() const {
  return options_.methods.sharding == Sharding::kNone ? shards_->total : shards_->size;
}

void Engine::phase(StepPhase p, int64_t micro_step) const {
  if (options_.phase_hook) options_.phase_hook(p, micro_step);
}

StepResult Engine::step(const MicroLoss& micro_loss) {
  StepResult r;
  r.lr = learning_rate(options_.schedule, steps_);
  r.loss = run_micro_steps(micro_loss);
  phase(StepPhase::kOptimizerBegin, -1);
  const bool overflow = unscale_and_check_overflow();
  r.applied = options_.precision != Precision::kFp16 || scaler_.update(overflow);
  if (r.applied) {
    r.grad_norm = clip();
    apply_update(r.lr);
  }
  for (at::Tensor& p : params_) p.mutable_grad() = at::Tensor();
  shards_->grad = at::Tensor();
  phase(StepPhase::kOptimizerEnd, -1);
  ++steps_;
  return r;
}

double Engine::run_micro_steps(const MicroLoss& micro_loss) {
  const c10::DeviceType device = params_.front().device().type();
  const bool mixed = options_.precision != Precision::kFp32;
  const double scale = options_.precision == Precision::kFp16 ? scaler_.scale() : 1.0;
  double loss_sum = 0.0;
  for (int64_t i = 0; i < options_.grad_acc_steps; ++i) {
    phase(StepPhase::kMicroStepBegin, i);
    at::Tensor loss;
    if (mixed) {
      at::autocast::set_autocast_enabled(device, true);
      at::autocast::set_autocast_dtype(
          device, options_.precision == Precision::kBf16 ? at::kBFloat16 : at::kHalf);
    }
    loss = micro_loss(i);
    if (mixed) {
      at::autocast::set_autocast_enabled(device, false);
      at::autocast::clear_cache();
    }
    loss_sum += loss.item<double>();
    (loss.to(at::kFloat) * (scale / static_cast<double>(options_.grad_acc_steps))).backward();
    reduce_micro_step(/*last=*/i + 1 == options_.grad_acc_steps);
    phase(StepPhase::kMicroStepEnd, i);
  }
  return loss_sum / static_cast<double>(options_.grad_acc_steps);
}

// stage 0: all-reduce the accumulated gradients after the last micro-step; stage 1: reduce-scatter
// them once; stage 2: reduce-scatter every micro-step and free the full gradients.
void Engine::reduce_micro_step(bool last) {
  const int stage = sharding_stage(options_.methods.sharding);
  if (!last && stage < 2) return;
  Shards& s = *shards_;
  at::NoGradGuard no_grad;
  at::Tensor flat = flatten_grads(params_, s.padded);
  const double world = static_cast<double>(comm_.size());
  if (stage == 0) {
    comm_.all_reduce(flat.data_ptr(), flat.numel(), DType::kFloat32, ReduceOp::kSum);
    flat.div_(world);
    std::vector<at::Tensor> grads;
    for (at::Tensor& p : params_) grads.push_back(p.mutable_grad());
    unflatten_into(flat, grads);
    return;
  }
  at::Tensor shard = at::empty({s.size}, flat.options());
  comm_.reduce_scatter(flat.data_ptr(), shard.data_ptr(), s.size, DType::kFloat32, ReduceOp::kSum);
  shard.div_(world);
  s.grad = s.grad.defined() ? s.grad.add_(shard) : shard;
  for (at::Tensor& p : params_) p.mutable_grad() = at::Tensor();  // the shard holds them now
}

// The gradients this rank holds: its reduced shard, or every parameter's gradient.
static std::vector<at::Tensor> local_grads(const std::vector<at::Tensor>& params,
                                           const at::Tensor& shard) {
  if (shard.defined()) return {shard};
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads;
}

bool Engine::unscale_and_check_overflow() {
  if (options_.precision != Precision::kFp16) return false;
  at::NoGradGuard no_grad;
  float bad = 0.0f;
  for (at::Tensor& g : local_grads(params_, shards_->grad)) {
    g.div_(scaler_.scale());
    if (!at::isfinite(g).all().item<bool>()) bad = 1.0f;
  }
  comm_.all_reduce(&bad, 1, DType::kFloat32, ReduceOp::kMax);
  return bad > 0.0f;
}

// Clipping by the global norm over every rank's part of the gradient (shards are disjoint; with
// no sharding every rank holds the same full gradient).
double Engine::clip() {
  at::NoGradGuard no_grad;
  double sum_sq = 0.0;
  const std::vector<at::Tensor> grads = local_grads(params_, shards_->grad);
  for (const at::Tensor& g : grads) sum_sq += g.to(at::kDouble).pow(2).sum().item<double>();
  if (shards_->grad.defined()) comm_.all_reduce(&sum_sq, 1, DType::kFloat64, ReduceOp::kSum);
  const double norm = std::sqrt(sum_sq);
  const double max_norm = options_.clip_grad_norm;
  if (max_norm > 0.0 && norm > max_norm) {
    const double coefficient = max_norm / (norm + 1e-6);
    for (at::Tensor g : grads) g.mul_(coefficient);
  }
  return norm;
}

void Engine::apply_update(double lr) {
  Shards& s = *shards_;
  if (!s.master.defined()) {
    s.adam->step(lr);
    return;
  }
  at::NoGradGuard no_grad;
  s.master.mutable_grad() = s.grad.to(s.master.device());
  s.adam->step(lr);
  s.master.mutable_grad() = at::Tensor();
  const at::Tensor updated = s.master.to(params_.front().device());
  at::Tensor flat = at::empty({s.padded}, updated.options());
  comm_.all_gather(updated.data_ptr(), flat.data_ptr(), s.size, DType::kFloat32);
  unflatten_into(flat.narrow(0, 0, s.total), params_);
}

}  // namespace gpudays
