// A training run's state in a checkpoint directory (trainer/checkpoint_files.h commits it):
// model.safetensors (every parameter in fp32 under its HuggingFace name, gathered from the
// masters; what export-hf reads), rank-R.safetensors per rank (this rank's optimizer slices and
// CPU random state; with no sharding only rank 0 writes the optimizer, which every rank holds
// whole; and the CPU and, on CUDA, the device's random state), and the counters and the optimizer's
// slot layout in the manifest. Loading re-shards the optimizer's slices when the number of ranks or
// the sharding stage changed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <nlohmann/json.hpp>

#include "distributed/communicator.h"
#include "trainer/run_state.h"

namespace gpudays {

class Engine;

struct RunCounters {
  int64_t step = 0;                // optimizer steps done
  int64_t samples_seen = 0;        // the data position: step x global batch
  nlohmann::json extra;            // the loop's own (model name, last loss), kept as given
  std::vector<std::string> files;  // copied in by rank 0 under their own names (model file,
                                   // tokenizer files)
};

// What a run's state is laid out as: the parameters (names, in the trainable's order, and sizes),
// which parameters each optimizer slot holds in order, and the device whose random state is saved.
struct StateLayout {
  std::vector<std::string> parameter_names;
  std::vector<int64_t> parameter_numels;
  std::vector<std::vector<int64_t>> parameter_shapes;
  std::vector<std::vector<int64_t>> slots;  // slot -> parameter indices, concatenated in the slot
  c10::Device device = c10::kCPU;
};

// The parameters' names and sizes (in the trainable's order) and the engine's optimizer slots
// (Engine::optimizer_slices: which parameters each holds, in order).
StateLayout state_layout(const std::vector<std::string>& names,
                         const std::vector<at::Tensor>& params,
                         Engine& engine,
                         c10::Device device);

// Collective: every rank calls it. Writes checkpoint step-`counters.step` under checkpoints_dir
// and keeps the newest `keep`.
void save_checkpoint(const std::string& checkpoints_dir,
                     int64_t keep,
                     Engine& engine,
                     const StateLayout& layout,
                     Communicator& comm,
                     const RunCounters& counters);

// Collective. Restores the engine (weights, optimizer, counters) and the random states from a
// checkpoint directory whose manifest was checked (read_checkpoint) and returns its counters.
// Every tensor is checked against the manifest and the model first (trainer/checkpoint_check.h),
// on every rank alike. The optimizer's moments are re-sliced parameter by parameter when the
// checkpoint's slot layout differs from `layout` (another sharding stage). Throws InputError
// naming the file and tensor for a checkpoint of another model or a tensor that does not fit, and
// for one written before layouts were recorded at another sharding stage.
RunCounters load_checkpoint(const std::string& dir,
                            const RunState& state,
                            Engine& engine,
                            const StateLayout& layout,
                            Communicator& comm);

// The names of a checkpoint's files and tensors.
inline constexpr const char* kCheckpointModelFile = "model.safetensors";
inline constexpr const char* kCpuRngTensor = "rng.cpu";
inline constexpr const char* kCudaRngTensor = "rng.cuda";
std::string checkpoint_rank_file(int64_t rank);  // rank-R.safetensors
// slot.S.MOMENT: a slot's moment (exp_avg, exp_avg_sq) or, as metadata, its start (first).
std::string optimizer_tensor_name(size_t slot, const std::string& moment);

// The parameters of a checkpoint's model.safetensors in `parameter_names` order (fp32, CPU).
std::vector<at::Tensor> read_checkpoint_parameters(const std::string& dir,
                                                   const std::vector<std::string>& parameter_names);

}  // namespace gpudays

namespace gpudays {
// The tokenizer files transformers reads, carried from beside the data into checkpoints and then
// into the HuggingFace export.
inline constexpr const char* kTokenizerFiles[] = {"tokenizer.json",
                                                  "tokenizer_config.json",
                                                  "special_tokens_map.json",
                                                  "vocab.json",
                                                  "merges.txt"};
}  // namespace gpudays
