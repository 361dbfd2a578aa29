// HuggingFace interop: the config.json transformers needs to rebuild a catalog model, and
// save_pretrained(), which writes it beside model.safetensors so that `from_pretrained(dir)` loads
// a model trained here. Tensor names are the modules' own (see checkpoint.h).
#pragma once

#include <torch/nn/module.h>

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "catalog/model_spec.h"
#include "models/checkpoint.h"

namespace gpudays::models {

// config.json contents for `spec`: the catalog's hf_config_of (catalog/hf_config.h).
nlohmann::json hf_config_json(const ModelSpec& spec);

// Loading options (name aliases) for HF checkpoints of the family.
LoadOptions hf_load_options(Family family);

// Writes dir/model.safetensors and dir/config.json (creating dir), each whole or not at all; a
// failed write (a full disk, a read-only directory) is an IoError.
void save_pretrained(const torch::nn::Module& module,
                     const ModelSpec& spec,
                     const std::string& dir);

}  // namespace gpudays::models
