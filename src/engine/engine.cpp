// Engine: micro-steps, reduction per sharding stage, unscale/overflow, clipping, sharded update.
#include "engine/engine.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/autocast_scope.h"
#include "engine/cuda_graph.h"
#include "engine/device.h"
#include "engine/shard_units.h"
#include "engine/trainable.h"
#include "search_space/search_space.h"

namespace gpudays {
namespace {

// The search space's validity rules (search_space/search_space.h) and the device's abilities.
void check_methods(const EngineOptions& o, int world, const at::Device& device) {
  std::string problem =
      method_set_problem(MethodSet{.sharding = o.sharding, .offloading = o.offload}, world);
  if (problem.empty() && device.is_cuda()) {
    problem =
        precision_problem(o.precision, device_name(device), compute_capability(device) / 10.0);
  }
  if (!problem.empty()) throw InputError(problem);
  if (o.grad_acc_steps < 1) throw InputError("gradient accumulation must be >= 1");
}

ShardConfig shard_config(const EngineOptions& o) {
  ShardConfig c;
  c.stage = sharding_stage(o.sharding);
  c.offload = o.offload;
  c.working_dtype = o.precision == Precision::kBf16   ? at::kBFloat16
                    : o.precision == Precision::kFp16 ? at::kHalf
                                                      : at::kFloat;
  return c;
}

}  // namespace

Engine::Engine(std::vector<at::Tensor> params,
               Communicator& comm,
               EngineOptions options,
               models::BlockParameters blocks)
    : params_(std::move(params)), comm_(comm), options_(options), scaler_(options.loss_scaler) {
  if (params_.empty()) throw InputError("the model has no parameters");
  check_methods(options_, comm_.size(), params_.front().device());
  set_tf32(options_.tf32);
  const at::Device device = params_.front().device();
  loss_factor_ = at::ones({}, at::TensorOptions().device(device).dtype(at::kFloat));
  if (options_.cuda_graphs && stage() == 0) {
    std::unique_ptr<GraphBackend> backend;
    if (options_.graph_backend) {
      backend = options_.graph_backend();
    } else if (device.is_cuda()) {
      backend = make_cuda_graph_backend(device);
    }
    if (backend) graph_ = std::make_unique<MicroStepGraph>(std::move(backend));
  }
  if (stage() == 0) {
    adam_ = std::make_unique<Adam>(params_, options_.adam);
    return;
  }
  if (stage() < 2) blocks.clear();  // one unit: reduced once per step
  units_ = std::make_unique<ShardUnits>(params_, blocks, comm_, shard_config(options_));
  adam_ = std::make_unique<Adam>(units_->masters(), options_.adam);
}

Engine::~Engine() {
  if (on_destroy_) on_destroy_();
}

int Engine::stage() const {
  return sharding_stage(options_.sharding);
}

int64_t Engine::optimizer_state_bytes() const {
  return adam_->state_bytes();
}

void Engine::gather_parameters() {
  if (units_) units_->gather_all();
}

void Engine::phase(StepPhase p, int64_t micro_step) const {
  if (options_.phase_hook) options_.phase_hook(p, micro_step);
}

bool Engine::cuda_graph_captured() const {
  return graph_ && graph_->captured();
}

StepResult Engine::step(const MicroLoss& micro_loss) {
  int64_t index = 0;
  return run_step({[&index](int64_t i) {
                     index = i;
                     return false;
                   },
                   [&] { return micro_loss(index); }},
                  /*graphable=*/false);
}

StepResult Engine::step(const MicroBatches& batches) {
  return run_step(batches, true);
}

StepResult Engine::run_step(const MicroBatches& batches, bool graphable) {
  StepResult r;
  r.lr = learning_rate(options_.schedule, steps_);
  batches_ = &batches;
  r.loss = run_micro_steps(graphable);
  batches_ = nullptr;
  phase(StepPhase::kOptimizerBegin, -1);
  const std::vector<at::Tensor> grads = local_grads();
  const bool overflow = unscale_and_check_overflow(grads);
  r.applied = options_.precision != Precision::kFp16 || scaler_.update(overflow);
  if (r.applied) {
    r.grad_norm = clip(grads);
    apply_update(r.lr, grads);
  }
  clear_grads();
  phase(StepPhase::kOptimizerEnd, -1);
  ++steps_;
  return r;
}

// The losses are summed on the device and read once per step (no host wait per micro-step).
double Engine::run_micro_steps(bool graphable) {
  const double scale = options_.precision == Precision::kFp16 ? scaler_.scale() : 1.0;
  loss_factor_.fill_(scale / static_cast<double>(options_.grad_acc_steps));
  const bool graphed = graphable && graph_ != nullptr;
  at::Tensor loss_sum;
  for (int64_t i = 0; i < options_.grad_acc_steps; ++i) {
    phase(StepPhase::kMicroStepBegin, i);
    begin_micro_step();
    const bool moved = batches_->load(i);
    if (graphed && moved) graph_->invalidate();
    // Valid across steps (the graph backend's stand-in re-runs it): the step's batches are a
    // member while the step runs.
    const MicroStepFn run = [this] { return forward_backward(); };
    const at::Tensor loss = graphed ? graph_->run(run) : run();
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss.clone();
    end_micro_step(/*last=*/i + 1 == options_.grad_acc_steps);
    phase(StepPhase::kMicroStepEnd, i);
  }
  return loss_sum.item<double>() / static_cast<double>(options_.grad_acc_steps);
}

// One micro-batch's forward (under autocast for mixed precision) and backward of the scaled loss;
// returns the unscaled loss (fp32, detached).
at::Tensor Engine::forward_backward() {
  at::Tensor loss;
  {
    const AutocastScope autocast(params_.front().device().type(), options_.precision);
    loss = batches_->loss().to(at::kFloat);
  }
  (loss * loss_factor_).backward();
  return loss.detach();
}

// Stage 1: the parameters accumulate into full flat gradients; stage 3: the unit outside the
// blocks is gathered for the whole micro-step (as FSDP's root unit).
void Engine::begin_micro_step() {
  if (graph_) {  // a captured backward accumulates into gradients that already exist
    for (at::Tensor& p : params_) {
      if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    }
  }
  if (!units_) return;
  if (stage() == 1) units_->attach_flat_grads();
  if (stage() == 3) units_->gather(units_->units().front());
}

// Stage 0: all-reduce after the last micro-step; stage 1: reduce-scatter after the last one;
// stage 2/3: reduce-scatter what the block hooks have not reduced yet (the unit outside the
// blocks; blocks whose input needs no gradient), every micro-step, and release at stage 3.
void Engine::end_micro_step(bool last) {
  if (!units_) {
    if (last) all_reduce_unsharded();
    return;
  }
  if (stage() == 1 && !last) return;
  for (ShardUnit& u : units_->units()) {
    if (!u.reduced) units_->reduce(u);
    u.reduced = false;
    if (stage() == 3) units_->release(u);
  }
}

// Stage 0 over several ranks: the gradients are averaged bucket by bucket, consecutive parameters
// of at most options_.all_reduce_bucket_bytes of fp32 together, so that the step holds one bucket
// beside the gradients and not a flat copy of all of them (4 bytes per parameter more at the
// step's end, which the planner would have had to count). Every rank forms the same buckets, from
// the parameters' sizes alone, so the collectives match.
void Engine::all_reduce_unsharded() {
  if (comm_.size() == 1) return;
  at::NoGradGuard no_grad;
  const int64_t cap = std::max<int64_t>(1, options_.all_reduce_bucket_bytes / 4);
  size_t begin = 0;
  while (begin < params_.size()) {
    size_t end = begin + 1;
    int64_t elements = params_[begin].numel();
    while (end < params_.size() && elements + params_[end].numel() <= cap) {
      elements += params_[end++].numel();
    }
    all_reduce_bucket(begin, end, elements);
    begin = end;
  }
}

// One bucket: a parameter alone whose gradient is a dense fp32 tensor (contiguous, or permuted as
// channels-last, with the same strides on every rank as its parameter) is summed in place;
// otherwise the bucket's gradients are flattened into one fp32 buffer (zeros where a rank has no
// gradient) and copied back.
void Engine::all_reduce_bucket(size_t begin, size_t end, int64_t elements) {
  const double ranks = static_cast<double>(comm_.size());
  if (end == begin + 1) {
    const at::Tensor& grad = params_[begin].grad();
    if (grad.defined() && grad.is_non_overlapping_and_dense() && grad.scalar_type() == at::kFloat) {
      comm_.all_reduce(grad.data_ptr(), grad.numel(), DType::kFloat32, ReduceOp::kSum);
      grad.div_(ranks);
      return;
    }
  }
  const std::vector<at::Tensor> bucket(params_.begin() + static_cast<std::ptrdiff_t>(begin),
                                       params_.begin() + static_cast<std::ptrdiff_t>(end));
  at::Tensor flat = flatten_grads(bucket, elements, at::kFloat);
  comm_.all_reduce(flat.data_ptr(), flat.numel(), DType::kFloat32, ReduceOp::kSum);
  flat.div_(ranks);
  int64_t offset = 0;
  for (size_t i = begin; i < end; ++i) {
    at::Tensor& p = params_[i];
    if (p.grad().defined()) p.mutable_grad().copy_(flat.narrow(0, offset, p.numel()).view_as(p));
    offset += p.numel();
  }
}

models::BlockRunner Engine::block_runner(models::BlockRunner inner) {
  if (stage() < 2 || !units_ || units_->units().size() < 2) return inner;
  const bool stage3 = stage() == 3;
  return
      [this, inner, stage3](int64_t index, const models::Block& block, const at::Tensor& hidden) {
        ShardUnit& u = units_->block_unit(index);
        if (stage3) units_->gather(u);
        if (at::GradMode::is_enabled() && hidden.requires_grad()) {
          // The input's gradient is complete once the block's backward is done.
          hidden.register_hook([this, &u, stage3](const at::TensorBase&) {
            if (!u.reduced) units_->reduce(u);
            if (stage3) units_->release(u);
          });
        }
        at::Tensor out = models::run_block(inner, index, block, hidden);
        if (stage3) {
          units_->release(u);
          if (out.requires_grad()) {
            out.register_hook([this, &u](const at::TensorBase&) { units_->gather(u); });
          }
        }
        return out;
      };
}

// The gradients this rank holds in fp32: its reduced slices, or every parameter's gradient.
std::vector<at::Tensor> Engine::local_grads() {
  std::vector<at::Tensor> grads;
  if (!units_) {
    for (const at::Tensor& p : params_) {
      if (p.grad().defined()) grads.push_back(p.grad());
    }
    return grads;
  }
  // With offloading every unit's copy to pinned host memory is queued first, then one wait.
  const bool offload = options_.offload;
  for (ShardUnit& u : units_->units()) {
    if (u.numel == 0) continue;
    grads.push_back(offload ? to_host(u.grad_shard, at::kFloat) : u.grad_shard.to(at::kFloat));
  }
  if (offload) synchronize(params_.front().device());
  return grads;
}

std::vector<GradientPiece> Engine::local_gradients() const {
  at::NoGradGuard no_grad;
  const auto fp32_copy = [](const at::Tensor& t) {
    return t.reshape(-1).to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  };
  std::vector<GradientPiece> pieces;
  if (!units_) {
    for (size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].grad().defined()) pieces.push_back({i, 0, fp32_copy(params_[i].grad())});
    }
    return pieces;
  }
  std::unordered_map<const void*, size_t> index;
  for (size_t i = 0; i < params_.size(); ++i) index[params_[i].unsafeGetTensorImpl()] = i;
  for (const ShardUnit& u : units_->units()) {
    if (u.numel == 0 || !u.grad_shard.defined()) continue;
    const int64_t begin = comm_.rank() * u.shard;  // this rank's slice of the unit's flat buffer
    const int64_t end = begin + u.shard;
    int64_t offset = 0;  // the parameter's start in the flat buffer
    for (const at::Tensor& p : u.params) {
      const int64_t lo = std::max(begin, offset);
      const int64_t hi = std::min(end, offset + p.numel());
      if (lo < hi) {
        pieces.push_back({index.at(p.unsafeGetTensorImpl()),
                          lo - offset,
                          fp32_copy(u.grad_shard.narrow(0, lo - begin, hi - lo))});
      }
      offset += p.numel();
    }
  }
  return pieces;
}

// The flag and the norm below are summed on the gradients' device and read once: no host wait
// per tensor.
bool Engine::unscale_and_check_overflow(const std::vector<at::Tensor>& grads) {
  if (options_.precision != Precision::kFp16) return false;
  at::NoGradGuard no_grad;
  at::Tensor bad = at::zeros({}, scalar_options(grads, at::kFloat));
  // AMP's multi-tensor kernel: every gradient times 1 / scale (a power of two: exact) and the
  // non-finite check, in one pass instead of three kernels per gradient.
  const at::Tensor inv_scale = at::full({}, 1.0 / scaler_.scale(), bad.options());
  at::_amp_foreach_non_finite_check_and_unscale_(grads, bad, inv_scale);
  // Sharded, each rank checks its own slice; unsharded, every rank holds the same all-reduced
  // gradient, so the same flag.
  if (units_) comm_.all_reduce(bad.data_ptr(), 1, DType::kFloat32, ReduceOp::kMax);
  return bad.item<float>() > 0.0f;
}

// Clipping by the global norm over every rank's part of the gradient (slices are disjoint; with
// no sharding every rank holds the same full gradient).
double Engine::clip(const std::vector<at::Tensor>& grads) {
  at::NoGradGuard no_grad;
  // Each tensor's norm in one multi-tensor pass over the gradients, accumulated and returned in
  // fp32 (a half-precision gradient's norm could overflow its dtype), as torch's clip_grad_norm_
  // takes it: no full-size copy or square per tensor. Their squares are summed in double.
  at::Tensor sum_sq = at::zeros({}, scalar_options(grads, at::kDouble));
  if (!grads.empty()) {
    sum_sq.add_(at::stack(at::_foreach_norm(grads, 2, at::kFloat)).to(at::kDouble).pow(2).sum());
  }
  if (units_) comm_.all_reduce(sum_sq.data_ptr(), 1, DType::kFloat64, ReduceOp::kSum);
  const double norm = std::sqrt(sum_sq.item<double>());
  const double max_norm = options_.clip_grad_norm;
  if (max_norm > 0.0 && norm > max_norm) {
    const double coefficient = max_norm / (norm + 1e-6);
    for (at::Tensor g : grads) g.mul_(coefficient);
  }
  return norm;
}

at::TensorOptions Engine::scalar_options(const std::vector<at::Tensor>& grads,
                                         at::ScalarType dtype) const {
  const at::Device device = grads.empty() ? params_.front().device() : grads.front().device();
  return at::TensorOptions().device(device).dtype(dtype);
}

void Engine::apply_update(double lr, const std::vector<at::Tensor>& grads) {
  if (!units_) {
    adam_->step(lr);
    return;
  }
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> masters = units_->masters();
  for (size_t i = 0; i < masters.size(); ++i) masters[i].mutable_grad() = grads[i];
  adam_->step(lr);
  for (at::Tensor& m : masters) m.mutable_grad() = at::Tensor();
  units_->write_back();
}

void Engine::clear_grads() {
  if (units_) {
    units_->clear_grads();
    return;
  }
  for (at::Tensor& p : params_) {
    if (graph_ && p.grad().defined()) {
      p.mutable_grad().zero_();  // kept: the graph accumulates into them
    } else {
      p.mutable_grad() = at::Tensor();
    }
  }
}

std::unique_ptr<Engine> make_engine(Trainable& trainable,
                                    Communicator& comm,
                                    EngineOptions options) {
  models::BlockParameters blocks = trainable.block_parameters();
  const bool has_blocks = !blocks.empty();
  auto engine =
      std::make_unique<Engine>(trainable.parameters(), comm, std::move(options), std::move(blocks));
  Engine* raw = engine.get();
  if (!has_blocks) return engine;
  trainable.wrap_block_runner(
      [raw](models::BlockRunner inner) { return raw->block_runner(std::move(inner)); });
  raw->on_destroy([&trainable] {
    trainable.wrap_block_runner([](models::BlockRunner inner) { return inner; });
  });
  return engine;
}

}  // namespace gpudays
