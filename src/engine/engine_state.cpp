// Engine state for checkpoints: full fp32 parameters gathered from (and scattered to) the masters,
// the optimizer's moments by slot, and the step counters. The files they go to are the trainer's.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <unordered_map>

#include "engine/engine.h"
#include "engine/shard_units.h"

namespace gpudays {
namespace {

// The parameter index of each of a unit's parameters.
std::vector<size_t> unit_indices(const ShardUnit& u, const std::vector<at::Tensor>& params) {
  std::unordered_map<const void*, size_t> index;
  for (size_t i = 0; i < params.size(); ++i) index[params[i].unsafeGetTensorImpl()] = i;
  std::vector<size_t> out;
  for (const at::Tensor& p : u.params) out.push_back(index.at(p.unsafeGetTensorImpl()));
  return out;
}

// The units that hold parameters, in the order of the optimizer's slots.
std::vector<ShardUnit*> slot_units(ShardUnits& units) {
  std::vector<ShardUnit*> out;
  for (ShardUnit& u : units.units()) {
    if (u.numel > 0) out.push_back(&u);
  }
  return out;
}

at::Tensor cpu_fp32(const at::Tensor& t) {
  return t.detach().to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace

std::vector<at::Tensor> Engine::full_parameters() {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> full(params_.size());
  if (!units_) {
    for (size_t i = 0; i < params_.size(); ++i) full[i] = cpu_fp32(params_[i]);
    return full;
  }
  const at::Device device = params_.front().device();
  for (ShardUnit* u : slot_units(*units_)) {
    const at::Tensor mine = u->master.to(device, at::kFloat).contiguous();
    at::Tensor flat = at::empty({u->padded}, mine.options());
    if (comm_.size() == 1) {
      flat.copy_(mine);
    } else {
      comm_.all_gather(mine.data_ptr(), flat.data_ptr(), u->shard, DType::kFloat32);
    }
    flat = cpu_fp32(flat);
    int64_t offset = 0;
    for (size_t i : unit_indices(*u, params_)) {
      full[i] = flat.narrow(0, offset, params_[i].numel()).view(params_[i].sizes()).clone();
      offset += params_[i].numel();
    }
  }
  return full;
}

void Engine::load_full_parameters(const std::vector<at::Tensor>& full) {
  at::NoGradGuard no_grad;
  if (!units_) {
    for (size_t i = 0; i < params_.size(); ++i) params_[i].copy_(full.at(i).view_as(params_[i]));
    return;
  }
  for (ShardUnit* u : slot_units(*units_)) {
    std::vector<at::Tensor> pieces;
    for (size_t i : unit_indices(*u, params_)) pieces.push_back(full.at(i).reshape(-1));
    at::Tensor flat = at::zeros({u->padded}, at::kFloat);
    flat.narrow(0, 0, u->numel).copy_(at::cat(pieces));
    u->master.copy_(flat.narrow(0, comm_.rank() * u->shard, u->shard));
  }
  units_->write_back();
}

std::vector<OptimizerSlice> Engine::optimizer_slices() {
  std::vector<OptimizerSlice> out;
  std::vector<at::Tensor>& m = adam_->exp_avg();
  std::vector<at::Tensor>& v = adam_->exp_avg_sq();
  if (!units_) {
    for (size_t i = 0; i < params_.size(); ++i) {
      const int64_t n = params_[i].numel();
      out.push_back({{static_cast<int64_t>(i)}, n, 0, n, m[i].view(-1), v[i].view(-1)});
    }
    return out;
  }
  size_t slot = 0;
  for (ShardUnit* u : slot_units(*units_)) {
    const int64_t first = comm_.rank() * u->shard;
    const int64_t count = std::clamp<int64_t>(u->numel - first, 0, u->shard);
    std::vector<int64_t> parameters;
    for (size_t i : unit_indices(*u, params_)) parameters.push_back(static_cast<int64_t>(i));
    out.push_back({std::move(parameters),
                   u->numel,
                   first,
                   count,
                   m[slot].narrow(0, 0, count),
                   v[slot].narrow(0, 0, count)});
    ++slot;
  }
  return out;
}

void Engine::load_optimizer(const SliceReader& read, double step_count) {
  at::NoGradGuard no_grad;
  const std::vector<OptimizerSlice> slices = optimizer_slices();
  for (size_t s = 0; s < slices.size(); ++s) {
    const OptimizerSlice& slice = slices[s];
    if (slice.count == 0) continue;
    slice.exp_avg.copy_(read(s, "exp_avg", slice.first, slice.count));
    slice.exp_avg_sq.copy_(read(s, "exp_avg_sq", slice.first, slice.count));
  }
  adam_->set_step_count(step_count);
}

void Engine::restore_counters(int64_t steps,
                              int64_t optimizer_steps,
                              const LossScalerState& scaler) {
  steps_ = steps;
  adam_->set_steps(optimizer_steps);
  scaler_.restore(scaler);
}

int64_t Engine::optimizer_steps() const {
  return adam_->steps();
}

double Engine::optimizer_step_count() const {
  return adam_->step_count();
}

}  // namespace gpudays
