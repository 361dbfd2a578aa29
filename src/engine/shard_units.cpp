// Sharded parameter units: flat buffers, gather and release, gradient reduction, write-back.
#include "engine/shard_units.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/StorageImpl.h>

#include <unordered_set>

#include "common/error.h"
#include "engine/device.h"

namespace gpudays {
namespace {

std::vector<std::vector<at::Tensor>> group_params(
    const std::vector<at::Tensor>& params, const std::vector<std::vector<at::Tensor>>& blocks) {
  std::unordered_set<const void*> in_blocks;
  for (const auto& block : blocks) {
    for (const at::Tensor& p : block) in_blocks.insert(p.unsafeGetTensorImpl());
  }
  std::vector<std::vector<at::Tensor>> groups(1);
  for (const at::Tensor& p : params) {
    if (in_blocks.count(p.unsafeGetTensorImpl()) == 0) groups[0].push_back(p);
  }
  for (const auto& block : blocks) groups.push_back(block);
  return groups;
}

}  // namespace

at::Tensor flatten_grads(const std::vector<at::Tensor>& params,
                         int64_t size,
                         at::ScalarType dtype) {
  at::Tensor flat = at::zeros({size}, params.front().options().dtype(dtype));
  int64_t offset = 0;
  for (const at::Tensor& p : params) {
    if (p.grad().defined()) flat.narrow(0, offset, p.numel()).copy_(p.grad().reshape(-1));
    offset += p.numel();
  }
  return flat;
}

at::Tensor to_host(const at::Tensor& t, at::ScalarType dtype) {
  if (!t.is_cuda()) return t.to(dtype);
  const at::Tensor host =
      at::empty(t.sizes(), t.options().device(at::kCPU).dtype(dtype).pinned_memory(true));
  host.copy_(t, /*non_blocking=*/true);
  return host;
}

at::Tensor to_host(const at::Tensor& t) {
  return to_host(t, t.scalar_type());
}

void resize_storage(const at::Tensor& t, size_t bytes) {
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  if (storage->nbytes() == bytes) return;
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
}

ShardUnits::ShardUnits(const std::vector<at::Tensor>& params,
                       const std::vector<std::vector<at::Tensor>>& blocks,
                       Communicator& comm,
                       ShardConfig config)
    : comm_(comm), config_(config) {
  for (auto& group : group_params(params, blocks)) {
    ShardUnit u;
    u.params = std::move(group);
    init_unit(u);
    units_.push_back(std::move(u));
  }
  if (config_.offload && !params.empty()) synchronize(params.front().device());  // host copies
  if (config_.stage >= 3) {
    for (ShardUnit& u : units_) release(u);
  }
}

void ShardUnits::init_unit(ShardUnit& u) {
  at::NoGradGuard no_grad;
  const int64_t world = comm_.size();
  for (const at::Tensor& p : u.params) u.numel += p.numel();
  u.padded = (u.numel + world - 1) / world * world;
  u.shard = u.padded / world;
  if (u.params.empty()) return;
  const at::TensorOptions working = u.params.front().options().dtype(config_.working_dtype);
  u.flat = at::zeros({u.padded}, working);
  int64_t offset = 0;
  for (const at::Tensor& p : u.params) {
    at::Tensor view = u.flat.narrow(0, offset, p.numel()).view(p.sizes());
    view.copy_(p.detach());
    p.set_data(view);
    offset += p.numel();
  }
  const at::Tensor slice = u.flat.narrow(0, comm_.rank() * u.shard, u.shard);
  const bool same = config_.working_dtype == at::kFloat && !config_.offload;
  if (same && config_.stage < 3) {
    u.master = slice;  // fp32 on the device: the slice of the flat buffer itself
  } else {
    u.master = slice.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
    if (config_.offload) u.master = to_host(u.master);
  }
  if (config_.stage >= 3)
    u.send = same ? u.master : (config_.offload ? at::Tensor() : slice.clone());
}

ShardUnit& ShardUnits::block_unit(int64_t block_index) {
  return units_.at(static_cast<size_t>(block_index) + 1);
}

DType ShardUnits::comm_dtype() const {
  switch (config_.working_dtype) {
    case at::kBFloat16:
      return DType::kBFloat16;
    case at::kHalf:
      return DType::kFloat16;
    default:
      return DType::kFloat32;
  }
}

// One rank copies tensors itself (the single-process communicator copies host memory only).
void ShardUnits::all_gather(const at::Tensor& send, const at::Tensor& flat) {
  if (comm_.size() == 1) {
    flat.narrow(0, 0, send.numel()).copy_(send);
    return;
  }
  comm_.all_gather(send.data_ptr(), flat.data_ptr(), send.numel(), comm_dtype());
}

void ShardUnits::reduce_scatter(const at::Tensor& full, const at::Tensor& part) {
  if (comm_.size() == 1) {
    part.copy_(full.narrow(0, 0, part.numel()));
    return;
  }
  comm_.reduce_scatter(
      full.data_ptr(), part.data_ptr(), part.numel(), comm_dtype(), ReduceOp::kSum);
}

void ShardUnits::gather(ShardUnit& u) {
  if (u.gathered || u.numel == 0) return;
  at::NoGradGuard no_grad;
  const at::Tensor send =
      u.send.defined() ? u.send
                       : u.master.to(u.flat.device(), config_.working_dtype, /*non_blocking=*/true);
  resize_storage(u.flat, static_cast<size_t>(u.padded) * u.flat.element_size());
  all_gather(send, u.flat);
  u.gathered = true;
}

void ShardUnits::release(ShardUnit& u) {
  if (!u.gathered || u.numel == 0) return;
  resize_storage(u.flat, 0);
  u.gathered = false;
}

void ShardUnits::gather_all() {
  for (ShardUnit& u : units_) gather(u);
}

void ShardUnits::attach_flat_grads() {
  for (ShardUnit& u : units_) {
    if (u.numel == 0 || u.flat_grad.defined()) continue;
    u.flat_grad = at::zeros({u.padded}, u.flat.options());
    int64_t offset = 0;
    for (at::Tensor& p : u.params) {
      p.mutable_grad() = u.flat_grad.narrow(0, offset, p.numel()).view(p.sizes());
      offset += p.numel();
    }
  }
}

void ShardUnits::reduce(ShardUnit& u) {
  if (u.numel == 0) return;
  at::NoGradGuard no_grad;
  at::Tensor full = u.flat_grad;
  if (!full.defined()) {
    full = flatten_grads(u.params, u.padded, u.flat.scalar_type());
    for (at::Tensor& p : u.params) p.mutable_grad() = at::Tensor();
  }
  at::Tensor part = at::empty({u.shard}, full.options());
  // Divided before the sum, so that half-precision sums over many ranks do not overflow.
  full.div_(static_cast<double>(comm_.size()));
  reduce_scatter(full, part);
  if (u.flat_grad.defined()) {  // stage 1: the slice lives inside the full gradient
    u.grad_shard = u.flat_grad.narrow(0, comm_.rank() * u.shard, u.shard);
    u.grad_shard.copy_(part);
  } else {
    u.grad_shard = u.grad_shard.defined() ? u.grad_shard.add_(part) : part;
  }
  u.reduced = true;
}

void ShardUnits::write_back() {
  at::NoGradGuard no_grad;
  for (ShardUnit& u : units_) {
    if (u.numel == 0) continue;
    if (config_.stage >= 3) {
      if (u.send.defined() && u.send.data_ptr() != u.master.data_ptr()) u.send.copy_(u.master);
      continue;
    }
    at::Tensor slice = u.flat.narrow(0, comm_.rank() * u.shard, u.shard);
    if (slice.data_ptr() != u.master.data_ptr()) slice.copy_(u.master, /*non_blocking=*/true);
    const at::Tensor send = slice.clone();
    all_gather(send, u.flat);
  }
}

void ShardUnits::clear_grads() {
  for (ShardUnit& u : units_) {
    for (at::Tensor& p : u.params) p.mutable_grad() = at::Tensor();
    u.flat_grad = at::Tensor();
    u.grad_shard = at::Tensor();
    u.reduced = false;
  }
}

std::vector<at::Tensor> ShardUnits::masters() const {
  std::vector<at::Tensor> out;
  for (const ShardUnit& u : units_) {
    if (u.numel > 0) out.push_back(u.master);
  }
  return out;
}

int64_t ShardUnits::elements_per_rank() const {
  int64_t n = 0;
  for (const ShardUnit& u : units_) n += u.shard;
  return n;
}

}  // namespace gpudays
