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
#include "common/json_fields.h"
#include "engine/engine.h"
#include "models/safetensors.h"
#include "trainer/checkpoint_files.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

constexpr const char* kModelFile = "model.safetensors";

std::string rank_file(int rank) {
  return fmt::format("rank-{}.safetensors", rank);
}

std::string slot_name(size_t slot, const std::string& moment) {
  return fmt::format("slot.{}.{}", slot, moment);
}

// The manifest's slot -> parameter indices, each an integer of 64 bits.
std::vector<std::vector<int64_t>> slot_parameters(const nlohmann::json& state,
                                                  const std::string& dir) {
  std::vector<std::vector<int64_t>> slots;
  for (const nlohmann::json& slot : state.at("slot_parameters")) {
    slots.emplace_back();
    for (const nlohmann::json& p : slot) {
      slots.back().push_back(json_int64_value(p, dir + ": slot_parameters"));
    }
  }
  return slots;
}

nlohmann::json slot_numels(Engine& engine) {
  nlohmann::json numels = nlohmann::json::array();
  for (const OptimizerSlice& s : engine.optimizer_slices()) numels.push_back(s.numel);
  return numels;
}

constexpr const char* kCpuRng = "rng.cpu";
constexpr const char* kCudaRng = "rng.cuda";

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
      tensors.emplace_back(slot_name(s, "exp_avg"), slices[s].exp_avg);
      tensors.emplace_back(slot_name(s, "exp_avg_sq"), slices[s].exp_avg_sq);
      metadata[slot_name(s, "first")] = std::to_string(slices[s].first);
    }
  }
  tensors.emplace_back(kCpuRng, at::detail::getDefaultCPUGenerator().get_state());
  if (device.is_cuda()) tensors.emplace_back(kCudaRng, generator_of(device).get_state());
  models::write_safetensors((fs::path(staging) / rank_file(rank)).string(), tensors, metadata);
}

// Elements [first, first + count) of a slot's moment, assembled from the ranks' files that hold
// pieces of it.
class SliceAssembler {
 public:
  SliceAssembler(const std::string& dir, int ranks) : dir_(dir) {
    for (int r = 0; r < ranks; ++r) {
      readers_.push_back(
          std::make_unique<models::SafetensorsReader>((fs::path(dir) / rank_file(r)).string()));
    }
  }

  // Every element comes from a rank's piece: a range no piece covers (a missing, shortened or
  // offset slice) is an InputError naming it, never zeros.
  at::Tensor read(size_t slot, const std::string& moment, int64_t first, int64_t count) const {
    at::Tensor out = at::empty({count}, at::kFloat);
    std::vector<std::pair<int64_t, int64_t>> covered;
    const std::string name = slot_name(slot, moment);
    for (const auto& reader : readers_) {
      if (!reader->contains(name)) continue;
      const int64_t begin = piece_first(*reader, slot);
      const at::Tensor piece = cached_read(*reader, name);
      const int64_t lo = std::max(first, begin);
      const int64_t hi = std::min(first + count, begin + piece.numel());
      if (lo >= hi) continue;
      out.narrow(0, lo - first, hi - lo).copy_(piece.narrow(0, lo - begin, hi - lo));
      covered.emplace_back(lo, hi);
    }
    require_covered(std::move(covered), name, first, count);
    return out;
  }

  const models::SafetensorsReader& reader(int rank) const { return *readers_.at(rank); }

 private:
  // The last tensor read from each file: a slot re-sliced parameter by parameter is read once.
  at::Tensor cached_read(const models::SafetensorsReader& reader, const std::string& name) const {
    auto& [cached_name, tensor] = cache_[&reader];
    if (cached_name != name) {
      tensor = reader.read(name).reshape(-1);
      if (tensor.scalar_type() != at::kFloat) {
        throw InputError(fmt::format("{}: optimizer state {} is {}, not float32",
                                     dir_,
                                     name,
                                     c10::toString(tensor.scalar_type())));
      }
      cached_name = name;
    }
    return tensor;
  }

  // The slot's first element in this rank's piece (its metadata), checked.
  int64_t piece_first(const models::SafetensorsReader& reader, size_t slot) const {
    const auto found = reader.metadata().find(slot_name(slot, "first"));
    char* end = nullptr;
    const long long first =
        found == reader.metadata().end() ? -1 : std::strtoll(found->second.c_str(), &end, 10);
    if (found == reader.metadata().end() || *end != '\0' || first < 0) {
      throw InputError(
          fmt::format("{}: optimizer slot {}: its first element is missing or not a "
                      "count in the metadata",
                      dir_,
                      slot));
    }
    return first;
  }

  void require_covered(std::vector<std::pair<int64_t, int64_t>> covered,
                       const std::string& name,
                       int64_t first,
                       int64_t count) const {
    std::sort(covered.begin(), covered.end());
    int64_t reached = first, gap_end = first + count;  // the first gap: [reached, gap_end)
    for (const auto& [lo, hi] : covered) {
      if (lo > reached) {
        gap_end = lo;
        break;
      }
      reached = std::max(reached, hi);
    }
    if (reached < first + count) {
      throw InputError(
          fmt::format("{}: optimizer state {} lacks elements [{}, {}) of [{}, {}): a "
                      "rank's file is missing, shortened or offset",
                      dir_,
                      name,
                      reached,
                      gap_end,
                      first,
                      first + count));
    }
  }

  std::string dir_;
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
SliceReader relayout_reader(const SliceAssembler& old_slices,
                            const std::vector<std::vector<int64_t>>& old_slots,
                            const StateLayout& layout,
                            const std::string& dir) {
  const auto old_where = parameter_locations(old_slots, layout.parameter_numels);
  for (const auto& [slot, offset] : old_where) {
    if (offset < 0) throw InputError(fmt::format("{}: a parameter is in no optimizer slot", dir));
  }
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
    models::write_safetensors((fs::path(staging) / kModelFile).string(), named);
    for (const std::string& file : counters.files) {
      fs::copy_file(file, fs::path(staging) / fs::path(file).filename());
    }
  }
  test_hook_stall_in_checkpoint(counters.step);
  write_rank_file(staging, engine, comm.rank(), layout.device);
  comm.barrier();
  if (comm.rank() == 0) {
    const nlohmann::json state = {
        {"step", counters.step},
        {"samples_seen", counters.samples_seen},
        {"world_size", comm.size()},
        {"replicated_optimizer", engine.optimizer_replicated()},
        {"slot_numels", slot_numels(engine)},
        {"slot_parameters", layout.slots},
        {"optimizer_steps", engine.optimizer_steps()},
        {"optimizer_step_count", engine.optimizer_step_count()},
        {"loss_scale", engine.loss_scaler_state().scale},
        {"loss_scale_clean_steps", engine.loss_scaler_state().clean_steps},
        {"loss_scale_skipped", engine.loss_scaler_state().skipped},
        {"extra", counters.extra}};
    commit_checkpoint(checkpoints_dir, counters.step, state);
    prune_checkpoints(checkpoints_dir, keep);
  }
  comm.barrier();
}

std::vector<at::Tensor> read_checkpoint_parameters(const std::string& dir,
                                                   const std::vector<std::string>& names) {
  const models::SafetensorsReader model((fs::path(dir) / kModelFile).string());
  std::vector<at::Tensor> full;
  for (const std::string& name : names) {
    if (!model.contains(name)) {
      throw InputError(
          fmt::format("{}: {} has no tensor {} (another model?)", dir, kModelFile, name));
    }
    full.push_back(model.read(name).to(at::kFloat));
  }
  return full;
}

RunCounters load_checkpoint(const std::string& dir,
                            const nlohmann::json& state,
                            Engine& engine,
                            const StateLayout& layout,
                            Communicator& comm) {
  const nlohmann::json numels = slot_numels(engine);
  // Checkpoints of before the layout was recorded: only the same sharding stage.
  const std::vector<std::vector<int64_t>> old_slots =
      state.contains("slot_parameters") ? slot_parameters(state, dir) : layout.slots;
  if (!state.contains("slot_parameters") &&
      (state.at("slot_numels") != numels ||
       state.at("replicated_optimizer").get<bool>() != engine.optimizer_replicated())) {
    throw InputError(fmt::format(
        "{}: written with another sharding stage or model; resume with the run file it was "
        "written with (the number of ranks may change)",
        dir));
  }
  for (size_t s = 0; s < old_slots.size(); ++s) {  // the same parameters, of the same sizes
    int64_t n = 0;
    for (const int64_t p : old_slots[s]) {
      if (p < 0 || p >= static_cast<int64_t>(layout.parameter_numels.size())) n = -1;
      if (n >= 0) n += layout.parameter_numels[static_cast<size_t>(p)];
    }
    if (s >= state.at("slot_numels").size() ||
        json_int64_value(state.at("slot_numels")[s], dir + ": slot_numels") != n) {
      throw InputError(fmt::format("{}: written for another model (optimizer slot {})", dir, s));
    }
  }
  engine.load_full_parameters(read_checkpoint_parameters(dir, layout.parameter_names));
  const int64_t old_world = json_int64_field(state, "world_size", std::nullopt, dir);
  if (old_world < 1 || old_world > (int64_t{1} << 20)) {
    throw InputError(fmt::format("{}: world_size {} out of range", dir, old_world));
  }
  const SliceAssembler slices(dir, static_cast<int>(old_world));
  const double step_count = state.at("optimizer_step_count").get<double>();
  if (old_slots == layout.slots) {
    engine.load_optimizer(
        [&](size_t slot, const std::string& moment, int64_t first, int64_t count) {
          return slices.read(slot, moment, first, count);
        },
        step_count);
  } else {
    engine.load_optimizer(relayout_reader(slices, old_slots, layout, dir), step_count);
  }
  engine.restore_counters(json_int64_field(state, "step", std::nullopt, dir),
                          json_int64_field(state, "optimizer_steps", std::nullopt, dir),
                          {state.at("loss_scale").get<double>(),
                           json_int64_field(state, "loss_scale_clean_steps", std::nullopt, dir),
                           json_int64_field(state, "loss_scale_skipped", std::nullopt, dir)});
  const models::SafetensorsReader& rng = slices.reader(comm.rank() < old_world ? comm.rank() : 0);
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  cpu.set_state(rng.read(kCpuRng));
  if (layout.device.is_cuda() && rng.contains(kCudaRng)) {
    at::Generator cuda = generator_of(layout.device);
    const std::lock_guard<std::mutex> lock(cuda.mutex());
    cuda.set_state(rng.read(kCudaRng));
  }
  RunCounters counters;
  counters.step = json_int64_field(state, "step", std::nullopt, "checkpoint state");
  counters.samples_seen = json_int64_field(state, "samples_seen", std::nullopt, "checkpoint state");
  counters.extra = state.at("extra");
  return counters;
}

StateLayout state_layout(const std::vector<std::string>& names,
                         const std::vector<at::Tensor>& params,
                         Engine& engine,
                         c10::Device device) {
  StateLayout layout{names, {}, {}, device};
  for (const at::Tensor& p : params) layout.parameter_numels.push_back(p.numel());
  for (OptimizerSlice& slice : engine.optimizer_slices()) {
    layout.slots.push_back(std::move(slice.parameters));
  }
  return layout;
}

}  // namespace gpudays
