// The hand-off to HuggingFace: a training checkpoint (trainer/train_state.h) becomes a directory
// `from_pretrained` loads: config.json (with the recipe's dtype), the weights in that dtype as
// model.safetensors or, above a shard size, model-0000i-of-0000n.safetensors with
// model.safetensors.index.json (as save_pretrained writes them), and the run's tokenizer files.
// Which model the checkpoint holds is the caller's to say (checkpoint_model below helps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "catalog/model_spec.h"

namespace gpudays {

struct HfExportOptions {
  std::string checkpoint_dir;  // a checked checkpoint (step-N)
  std::string out_dir;
  int64_t max_shard_bytes = 5'000'000'000;  // save_pretrained's default, "5GB"
};

// The model a checkpoint was trained as: its carried model file, or `catalog_name` resolved by
// the caller. Returns the model file's path inside the checkpoint, or "" for a catalog model (whose
// name is written to `catalog_name`).
std::string checkpoint_model_file(const std::string& checkpoint_dir, std::string& catalog_name);

// Writes the export; returns the number of weight files. Throws InputError for a checkpoint that
// fails its checks or does not hold `model`.
int64_t export_hf(const HfExportOptions& options, const ModelSpec& model);

// The parameters `names` (module names, fp32 CPU) from a directory of safetensors weights: a
// HuggingFace directory (model.safetensors, or shards listed by model.safetensors.index.json; the
// family's checkpoint aliases apply) or a training checkpoint. Throws InputError naming a missing
// tensor.
std::vector<at::Tensor> read_pretrained_parameters(const std::string& dir,
                                                   const std::vector<std::string>& names,
                                                   Family family);

}  // namespace gpudays
