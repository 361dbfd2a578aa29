// A training run's state in a checkpoint directory (trainer/checkpoint_files.h commits it):
// model.safetensors (every parameter in fp32 under its HuggingFace name, gathered from the
// masters; what export-hf reads), rank-R.safetensors per rank (this rank's optimizer slices and
// CPU random state; with no sharding only rank 0 writes the optimizer, which every rank holds
// whole), and the counters in the manifest. Loading re-shards the optimizer's slices when the
// number of ranks changed; the sharding stage must stay the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"

namespace gpudays {

class Engine;

struct RunCounters {
  int64_t step = 0;                // optimizer steps done
  int64_t samples_seen = 0;        // the data position: step x global batch
  nlohmann::json extra;            // the loop's own (model name, last loss), kept as given
  std::vector<std::string> files;  // copied in by rank 0 under their own names (model file,
                                   // tokenizer files)
};

// Collective: every rank calls it. Writes checkpoint step-`counters.step` under checkpoints_dir
// and keeps the newest `keep`.
void save_checkpoint(const std::string& checkpoints_dir,
                     int64_t keep,
                     Engine& engine,
                     const std::vector<std::string>& parameter_names,
                     Communicator& comm,
                     const RunCounters& counters);

// Collective. Restores the engine (weights, optimizer, counters) and the CPU random state from a
// checked checkpoint directory and returns its counters. Throws InputError for a checkpoint of
// another model or sharding stage.
RunCounters load_checkpoint(const std::string& dir,
                            const nlohmann::json& state,
                            Engine& engine,
                            const std::vector<std::string>& parameter_names,
                            Communicator& comm);

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
