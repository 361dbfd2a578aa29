// The run's counters and the optimizer's slot layout that a checkpoint's manifest holds under
// "state": written by trainer/train_state.h's save_checkpoint, read back field by field (present,
// of its type, in range) before any of it is used, so that a damaged manifest is one line, never a
// JSON library's exception. Torch-free; what the tensors hold is train_state.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudays {

// At most this many ranks wrote a checkpoint (a bound on the rank files opened).
inline constexpr int64_t kMaxCheckpointRanks = int64_t{1} << 20;

struct RunState {
  int64_t step = 0;          // optimizer steps done
  int64_t samples_seen = 0;  // the data position: step x global batch
  int64_t world_size = 1;    // the ranks that wrote it (one rank-R.safetensors each)
  bool replicated_optimizer = false;
  std::vector<int64_t> slot_numels;  // elements of each optimizer slot
  // Which parameters each slot holds, in order; absent in checkpoints written before it was kept.
  std::optional<std::vector<std::vector<int64_t>>> slot_parameters;
  int64_t optimizer_steps = 0;
  double optimizer_step_count = 0.0;  // Adam's bias-correction count
  double loss_scale = 1.0;
  int64_t loss_scale_clean_steps = 0;
  int64_t loss_scale_skipped = 0;
  nlohmann::json extra = nlohmann::json::object();  // the loop's own (model name, last loss)

  bool operator==(const RunState&) const = default;
};

nlohmann::json run_state_json(const RunState& state);

// Reads `j` back; any field missing, of another type or out of range (a negative count, a step
// count that is not finite) is an InputError "{what}: state.{field} ...".
RunState parse_run_state(const nlohmann::json& j, const std::string& what);

}  // namespace gpudays
