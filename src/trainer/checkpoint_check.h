// A checkpoint's tensors checked against its manifest and the model before any is used: every
// parameter of model.safetensors present, float32 and of the model's shape; every optimizer piece
// of the rank files float32, one-dimensional, inside its slot, and the pieces covering every slot;
// each random state a byte tensor of the generator's size. A mismatch is one InputError naming the
// file and the tensor (exit 2), never a zero-fill or a LibTorch error. Loading is train_state.h's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainer/run_state.h"
#include "trainer/train_state.h"

namespace gpudays {

// rank -> (slot -> the slot's element where that rank's piece starts), for the pieces a rank
// file holds.
using PieceStarts = std::vector<std::map<size_t, int64_t>>;

// The manifest's slot -> parameter indices, checked against the model: each index a parameter of
// `layout`, each parameter in one slot, each slot of the size the manifest states. Checkpoints
// written before the layout was kept must have the model's slots (`replicated`: the engine's
// optimizer is whole on every rank).
std::vector<std::vector<int64_t>> checked_slot_parameters(const std::string& dir,
                                                          const RunState& state,
                                                          const StateLayout& layout,
                                                          bool replicated);

// dir/model.safetensors holds every parameter of `names`, float32, of `shapes`.
void check_model_tensors(const std::string& dir,
                         const std::vector<std::string>& names,
                         const std::vector<std::vector<int64_t>>& shapes);

// Every check above plus the rank files', for a checkpoint whose slots are `slots` (from
// checked_slot_parameters). Returns where each rank's pieces start.
PieceStarts check_checkpoint_tensors(const std::string& dir,
                                     const RunState& state,
                                     const StateLayout& layout,
                                     const std::vector<std::vector<int64_t>>& slots);

}  // namespace gpudays
