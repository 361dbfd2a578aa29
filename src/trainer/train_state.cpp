// Saving and loading a run's state, re-sharding the optimizer on load.
#include "trainer/train_state.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/engine.h"
#include "models/safetensors.h"
#include "trainer/checkpoint_check.h"
#include "trainer/checkpoint_files.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

// The default generator of the CPU, or of a CUDA device.
at::Generator generator_of(c10::Device device) {
  return device.is_cuda() ? at::globalContext().defaultGenerator(device)
                          : at::detail::getDefaultCPUGenerator();
}

void write_rank_file(const std::string& staging, Engine& engine, int rank, c10::Device device) {
  models::NamedTensors tensors;
  std::map<std::string, std::string> metadata;
  if (!engine.optimizer_replicated() || rank == 0) {
    const std::vector<OptimizerSlice> slices = engine.optimizer_slices();
    for (size_t s = 0; s < slices.size(); ++s) {
      if (slices[s].count == 0) continue;
      tensors.emplace_back(optimizer_tensor_name(s, "exp_avg"), slices[s].exp_avg);
      tensors.emplace_back(optimizer_tensor_name(s, "exp_avg_sq"), slices[s].exp_avg_sq);
      metadata[optimizer_tensor_name(s, "first")] = std::to_string(slices[s].first);
    }
  }
  tensors.emplace_back(kCpuRngTensor, at::detail::getDefaultCPUGenerator().get_state());
  if (device.is_cuda()) tensors.emplace_back(kCudaRngTensor, generator_of(device).get_state());
  models::write_safetensors(
      (fs::path(staging) / checkpoint_rank_file(rank)).string(), tensors, metadata);
}

// Elements [first, first + count) of a slot's moment, assembled from the ranks' files that hold
// pieces of it; the pieces were checked (checkpoint_check.h) to lie inside their slots and to
// cover them.
class SliceAssembler {
 public:
  SliceAssembler(const std::string& dir, int64_t ranks, PieceStarts starts)
      : starts_(std::move(starts)) {
    for (int64_t r = 0; r < ranks; ++r) {
      readers_.push_back(std::make_unique<models::SafetensorsReader>(
          (fs::path(dir) / checkpoint_rank_file(r)).string()));
    }
  }

  at::Tensor read(size_t slot, const std::string& moment, int64_t first, int64_t count) const {
    at::Tensor out = at::empty({count}, at::kFloat);
    const std::string name = optimizer_tensor_name(slot, moment);
    for (size_t r = 0; r < readers_.size(); ++r) {
      if (!readers_[r]->contains(name)) continue;
      const int64_t begin = starts_[r].at(slot);
      const at::Tensor piece = cached_read(*readers_[r], name);
      const int64_t lo = std::max(first, begin);
      const int64_t hi = std::min(first + count, begin + piece.numel());
      if (lo < hi) out.narrow(0, lo - first, hi - lo).copy_(piece.narrow(0, lo - begin, hi - lo));
    }
    return out;
  }

  const models::SafetensorsReader& reader(int64_t rank) const {
    return *readers_.at(static_cast<size_t>(rank));
  }

 private:
  // The last tensor read from each file: a slot re-sliced parameter by parameter is read once.
  at::Tensor cached_read(const models::SafetensorsReader& reader, const std::string& name) const {
    auto& [cached_name, tensor] = cache_[&reader];
    if (cached_name != name) {
      tensor = reader.read(name);
      cached_name = name;
    }
    return tensor;
  }

  PieceStarts starts_;
  std::vector<std::unique_ptr<models::SafetensorsReader>> readers_;
  mutable std::unordered_map<const models::SafetensorsReader*, std::pair<std::string, at::Tensor>>
      cache_;
};

// Where each parameter's moments lie in a slot layout: (slot, offset in the slot).
std::vector<std::pair<size_t, int64_t>> parameter_locations(
    const std::vector<std::vector<int64_t>>& slots, const std::vector<int64_t>& numels) {
  std::vector<std::pair<size_t, int64_t>> where(numels.size(), {0, -1});
  for (size_t s = 0; s < slots.size(); ++s) {
    int64_t offset = 0;
    for (const int64_t p : slots[s]) {
      where.at(static_cast<size_t>(p)) = {s, offset};
      offset += numels.at(static_cast<size_t>(p));
    }
  }
  return where;
}

// A reader of the new layout's slices from a checkpoint of another layout: each parameter's piece
// of the requested range is read from where the old layout put that parameter.
// Every parameter is in one old slot (checked_slot_parameters).
SliceReader relayout_reader(const SliceAssembler& old_slices,
                            const std::vector<std::vector<int64_t>>& old_slots,
                            const StateLayout& layout) {
  const auto old_where = parameter_locations(old_slots, layout.parameter_numels);
  return [&old_slices, &layout, old_where](
             size_t slot, const std::string& moment, int64_t first, int64_t count) {
    at::Tensor out = at::empty({count}, at::kFloat);
    int64_t offset = 0;  // the parameter's start in the new slot
    for (const int64_t p : layout.slots.at(slot)) {
      const int64_t n = layout.parameter_numels[static_cast<size_t>(p)];
      const int64_t lo = std::max(first, offset);
      const int64_t hi = std::min(first + count, offset + n);
      if (lo < hi) {
        const auto& [old_slot, old_offset] = old_where[static_cast<size_t>(p)];
        out.narrow(0, lo - first, hi - lo)
            .copy_(old_slices.read(old_slot, moment, old_offset + lo - offset, hi - lo));
      }
      offset += n;
    }
    return out;
  };
}

}  // namespace

std::string checkpoint_rank_file(int64_t rank) {
  return fmt::format("rank-{}.safetensors", rank);
}

std::string optimizer_tensor_name(size_t slot, const std::string& moment) {
  return fmt::format("slot.{}.{}", slot, moment);
}

void save_checkpoint(const std::string& checkpoints_dir,
                     int64_t keep,
                     Engine& engine,
                     const StateLayout& layout,
                     Communicator& comm,
                     const RunCounters& counters) {
  if (comm.rank() == 0) begin_checkpoint(checkpoints_dir, counters.step);
  comm.barrier();
  const std::string staging = staging_checkpoint_dir(checkpoints_dir, counters.step);
  const std::vector<at::Tensor> full = engine.full_parameters();
  if (comm.rank() == 0) {
    models::NamedTensors named;
    for (size_t i = 0; i < full.size(); ++i) {
      named.emplace_back(layout.parameter_names.at(i), full[i]);
    }
    models::write_safetensors((fs::path(staging) / kCheckpointModelFile).string(), named);
    for (const std::string& file : counters.files) {
      fs::copy_file(file, fs::path(staging) / fs::path(file).filename());
    }
  }
  test_hook_stall_in_checkpoint(counters.step);
  write_rank_file(staging, engine, comm.rank(), layout.device);
  comm.barrier();
  if (comm.rank() == 0) {
    RunState state;
    state.step = counters.step;
    state.samples_seen = counters.samples_seen;
    state.world_size = comm.size();
    state.replicated_optimizer = engine.optimizer_replicated();
    for (const OptimizerSlice& s : engine.optimizer_slices()) state.slot_numels.push_back(s.numel);
    state.slot_parameters = layout.slots;
    state.optimizer_steps = engine.optimizer_steps();
    state.optimizer_step_count = engine.optimizer_step_count();
    state.loss_scale = engine.loss_scaler_state().scale;
    state.loss_scale_clean_steps = engine.loss_scaler_state().clean_steps;
    state.loss_scale_skipped = engine.loss_scaler_state().skipped;
    state.extra = counters.extra;
    commit_checkpoint(checkpoints_dir, counters.step, state);
    prune_checkpoints(checkpoints_dir, keep);
  }
  comm.barrier();
}

std::vector<at::Tensor> read_checkpoint_parameters(const std::string& dir,
                                                   const std::vector<std::string>& names) {
  const models::SafetensorsReader model((fs::path(dir) / kCheckpointModelFile).string());
  std::vector<at::Tensor> full;
  for (const std::string& name : names) {
    if (!model.contains(name)) {
      throw InputError(
          fmt::format("{}: {} has no tensor {} (another model?)", dir, kCheckpointModelFile, name));
    }
    full.push_back(model.read(name).to(at::kFloat));
  }
  return full;
}

RunCounters load_checkpoint(const std::string& dir,
                            const RunState& state,
                            Engine& engine,
                            const StateLayout& layout,
                            Communicator& comm) {
  // Everything checked before anything is used (every rank alike: they fail together).
  const std::vector<std::vector<int64_t>> old_slots =
      checked_slot_parameters(dir, state, layout, engine.optimizer_replicated());
  PieceStarts starts = check_checkpoint_tensors(dir, state, layout, old_slots);
  engine.load_full_parameters(read_checkpoint_parameters(dir, layout.parameter_names));
  const SliceAssembler slices(dir, state.world_size, std::move(starts));
  if (old_slots == layout.slots) {
    engine.load_optimizer(
        [&](size_t slot, const std::string& moment, int64_t first, int64_t count) {
          return slices.read(slot, moment, first, count);
        },
        state.optimizer_step_count);
  } else {
    engine.load_optimizer(relayout_reader(slices, old_slots, layout), state.optimizer_step_count);
  }
  engine.restore_counters(
      state.step,
      state.optimizer_steps,
      {state.loss_scale, state.loss_scale_clean_steps, state.loss_scale_skipped});
  const models::SafetensorsReader& rng =
      slices.reader(comm.rank() < state.world_size ? comm.rank() : 0);
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  cpu.set_state(rng.read(kCpuRngTensor));
  if (layout.device.is_cuda() && rng.contains(kCudaRngTensor)) {
    at::Generator cuda = generator_of(layout.device);
    const std::lock_guard<std::mutex> lock(cuda.mutex());
    cuda.set_state(rng.read(kCudaRngTensor));
  }
  return {state.step, state.samples_seen, state.extra, {}};
}

StateLayout state_layout(const std::vector<std::string>& names,
                         const std::vector<at::Tensor>& params,
                         Engine& engine,
                         c10::Device device) {
  StateLayout layout{names, {}, {}, {}, device};
  for (const at::Tensor& p : params) {
    layout.parameter_numels.push_back(p.numel());
    layout.parameter_shapes.push_back(p.sizes().vec());
  }
  for (OptimizerSlice& slice : engine.optimizer_slices()) {
    layout.slots.push_back(std::move(slice.parameters));
  }
  return layout;
}

}  // namespace gpudays
