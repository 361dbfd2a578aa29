// Checking a checkpoint's tensors from the safetensors headers alone (no data is read).
#include "trainer/checkpoint_check.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "models/safetensors.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

InputError tensor_error(const std::string& file,
                        const std::string& tensor,
                        const std::string& why) {
  return InputError(fmt::format("{}: tensor {}: {}", file, tensor, why));
}

// A tensor's dtype and shape as a message states them: "F16 [4, 8]".
std::string described(const models::SafetensorsEntry& e) {
  return fmt::format("{} [{}]", models::safetensors_dtype_name(e.dtype), fmt::join(e.shape, ", "));
}

int64_t numel(const models::SafetensorsEntry& e) {
  int64_t n = 1;
  for (const int64_t d : e.shape) n *= d;  // the reader checked it fits
  return n;
}

// A byte tensor of one dimension and `bytes` bytes (a generator's state).
void check_rng(const std::string& file,
               const models::SafetensorsReader& reader,
               const std::string& name,
               int64_t bytes) {
  if (!reader.contains(name)) throw tensor_error(file, name, "missing");
  const models::SafetensorsEntry& e = reader.entries().at(name);
  if (e.dtype != at::kByte || e.shape.size() != 1 || e.shape[0] != bytes) {
    throw tensor_error(
        file, name, fmt::format("is {}, not a random state (U8 [{}])", described(e), bytes));
  }
}

int64_t rng_state_bytes(c10::Device device) {
  at::Generator g = device.is_cuda() ? at::globalContext().defaultGenerator(device)
                                     : at::detail::getDefaultCPUGenerator();
  return g.get_state().numel();
}

// slot.S.exp_avg or slot.S.exp_avg_sq -> S; nullopt for any other name.
std::optional<size_t> slot_of(const std::string& name, std::string& moment) {
  constexpr std::string_view kPrefix = "slot.";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  size_t slot = 0;
  const auto [dot, ec] = std::from_chars(begin, end, slot);
  if (ec != std::errc() || dot == end || *dot != '.' || dot == begin) return std::nullopt;
  moment = std::string(dot + 1, end);
  if (moment != "exp_avg" && moment != "exp_avg_sq") return std::nullopt;
  return slot;
}

// The slot's first element in this rank's piece, from the file's metadata.
int64_t piece_start(const std::string& file,
                    const models::SafetensorsReader& reader,
                    size_t slot,
                    const std::string& tensor) {
  const std::string key = optimizer_tensor_name(slot, "first");
  const auto found = reader.metadata().find(key);
  int64_t first = -1;
  if (found != reader.metadata().end()) {
    const std::string& text = found->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), first);
    if (ec != std::errc() || end != text.data() + text.size()) first = -1;
  }
  if (first < 0) {
    throw tensor_error(
        file, tensor, fmt::format("its start ({} in the metadata) is missing or not a count", key));
  }
  return first;
}

// [lo, hi) element ranges of one slot's moment, from every rank.
using Ranges = std::vector<std::pair<int64_t, int64_t>>;

// The first range of [0, numel) that `ranges` leave uncovered, as [reached, gap_end).
std::optional<std::pair<int64_t, int64_t>> first_gap(Ranges ranges, int64_t numel) {
  std::sort(ranges.begin(), ranges.end());
  int64_t reached = 0;
  for (const auto& [lo, hi] : ranges) {
    if (lo > reached) return std::make_pair(reached, lo);
    reached = std::max(reached, hi);
  }
  if (reached < numel) return std::make_pair(reached, numel);
  return std::nullopt;
}

// One rank file's optimizer pieces: each inside its slot; records their ranges and starts.
void check_rank_pieces(const std::string& file,
                       const models::SafetensorsReader& reader,
                       const RunState& state,
                       std::map<std::pair<size_t, std::string>, Ranges>& covered,
                       std::map<size_t, int64_t>& starts) {
  for (const auto& [name, e] : reader.entries()) {
    if (name == kCpuRngTensor || name == kCudaRngTensor) continue;
    std::string moment;
    const std::optional<size_t> slot = slot_of(name, moment);
    if (!slot || *slot >= state.slot_numels.size()) {
      throw tensor_error(file,
                         name,
                         fmt::format("not a tensor of this checkpoint's {} optimizer slots",
                                     state.slot_numels.size()));
    }
    if (e.dtype != at::kFloat || e.shape.size() != 1) {
      throw tensor_error(
          file, name, fmt::format("is {}, not float32 of one dimension (F32 [n])", described(e)));
    }
    const int64_t first = piece_start(file, reader, *slot, name);
    const int64_t slot_numel = state.slot_numels[*slot];
    if (first > slot_numel || numel(e) > slot_numel - first) {
      throw tensor_error(file,
                         name,
                         fmt::format("{} elements from element {} lie outside its slot's [0, {})",
                                     numel(e),
                                     first,
                                     slot_numel));
    }
    covered[{*slot, moment}].emplace_back(first, first + numel(e));
    starts[*slot] = first;
  }
}

}  // namespace

std::vector<std::vector<int64_t>> checked_slot_parameters(const std::string& dir,
                                                          const RunState& state,
                                                          const StateLayout& layout,
                                                          bool replicated) {
  const std::string manifest = (fs::path(dir) / "manifest.json").string();
  if (!state.slot_parameters) {  // written before the layout was kept: only the same stage
    std::vector<int64_t> numels;
    for (const auto& slot : layout.slots) {
      int64_t n = 0;
      for (const int64_t p : slot) n += layout.parameter_numels[static_cast<size_t>(p)];
      numels.push_back(n);
    }
    if (state.slot_numels != numels || state.replicated_optimizer != replicated) {
      throw InputError(fmt::format(
          "{}: written with another sharding stage or model; resume with the run file it was "
          "written with (the number of ranks may change)",
          dir));
    }
    return layout.slots;
  }
  const std::vector<std::vector<int64_t>>& slots = *state.slot_parameters;
  std::vector<int> seen(layout.parameter_numels.size(), 0);
  for (size_t s = 0; s < slots.size(); ++s) {
    int64_t n = 0;
    for (const int64_t p : slots[s]) {
      if (p >= static_cast<int64_t>(seen.size()) || seen[static_cast<size_t>(p)]++ > 0) {
        throw InputError(fmt::format(
            "{}: state.slot_parameters: slot {} holds parameter {}, which is not one of the "
            "model's {} or is in another slot too (written for another model?)",
            manifest,
            s,
            p,
            seen.size()));
      }
      n += layout.parameter_numels[static_cast<size_t>(p)];
    }
    if (s >= state.slot_numels.size() || state.slot_numels[s] != n) {
      throw InputError(fmt::format("{}: written for another model (optimizer slot {})", dir, s));
    }
  }
  if (slots.size() != state.slot_numels.size() ||
      std::find(seen.begin(), seen.end(), 0) != seen.end()) {
    throw InputError(fmt::format(
        "{}: state.slot_parameters leaves a parameter out of every slot, or slot_numels has "
        "another number of slots (written for another model?)",
        manifest));
  }
  return slots;
}

void check_model_tensors(const std::string& dir,
                         const std::vector<std::string>& names,
                         const std::vector<std::vector<int64_t>>& shapes) {
  const std::string file = (fs::path(dir) / kCheckpointModelFile).string();
  const models::SafetensorsReader model(file);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!model.contains(names[i])) throw tensor_error(file, names[i], "missing (another model?)");
    const models::SafetensorsEntry& e = model.entries().at(names[i]);
    if (e.dtype != at::kFloat || e.shape != shapes.at(i)) {
      throw tensor_error(
          file,
          names[i],
          fmt::format(
              "is {}, the model's parameter F32 [{}]", described(e), fmt::join(shapes[i], ", ")));
    }
  }
}

PieceStarts check_checkpoint_tensors(const std::string& dir,
                                     const RunState& state,
                                     const StateLayout& layout,
                                     const std::vector<std::vector<int64_t>>& slots) {
  check_model_tensors(dir, layout.parameter_names, layout.parameter_shapes);
  std::map<std::pair<size_t, std::string>, Ranges> covered;
  PieceStarts starts(static_cast<size_t>(state.world_size));
  const int64_t cpu_bytes = rng_state_bytes(c10::kCPU);
  const int64_t device_bytes = layout.device.is_cuda() ? rng_state_bytes(layout.device) : 0;
  for (int64_t r = 0; r < state.world_size; ++r) {
    const std::string file = (fs::path(dir) / checkpoint_rank_file(r)).string();
    if (!fs::is_regular_file(file)) {
      throw InputError(
          fmt::format("{}: missing (the checkpoint has {} ranks)", file, state.world_size));
    }
    const models::SafetensorsReader reader(file);
    check_rank_pieces(file, reader, state, covered, starts[static_cast<size_t>(r)]);
    check_rng(file, reader, kCpuRngTensor, cpu_bytes);
    if (device_bytes > 0 && reader.contains(kCudaRngTensor)) {
      check_rng(file, reader, kCudaRngTensor, device_bytes);
    }
  }
  for (size_t s = 0; s < slots.size(); ++s) {
    for (const char* moment : {"exp_avg", "exp_avg_sq"}) {
      const auto gap = first_gap(covered[{s, moment}], state.slot_numels[s]);
      if (gap && state.slot_numels[s] > 0) {
        throw InputError(fmt::format(
            "{}/rank-*.safetensors: optimizer state {} lacks elements [{}, {}) of [0, {}): a "
            "rank's file is missing, shortened or offset",
            dir,
            optimizer_tensor_name(s, moment),
            gap->first,
            gap->second,
            state.slot_numels[s]));
      }
    }
  }
  return starts;
}

}  // namespace gpudays
