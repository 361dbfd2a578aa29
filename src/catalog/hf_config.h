// Reads a HuggingFace config.json (as transformers' save_pretrained writes it) of a supported
// family (gpt_neox, roberta, vit, convnext, mamba) into a ModelSpec. A config.json holds the
// architecture only: the training recipe, and what it lacks of the sample shape, come from a
// catalog model of the same family (docs/catalog.md, "HuggingFace config.json").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "catalog/model_spec.h"

namespace gpudays {

// Whether --model-file names a config.json rather than a model TOML file (by its extension).
bool is_hf_config_path(const std::string& path);

// The model of `path`. Its recipe (and Mamba's sequence length) is that of the model in
// `catalog` of the same family nearest in parameter count. Throws InputError (one line, naming
// the file and the field) for an unsupported model_type, a missing or mistyped field, or shapes
// the catalog's checks reject.
ModelSpec load_hf_config(const std::string& path, const std::vector<ModelSpec>& catalog);

// The config.json of `model` as transformers' save_pretrained writes it (hf_config_writer.cpp):
// the family's key map, with the 4.x names where they differ, and its constant fields.
nlohmann::json hf_config_of(const ModelSpec& model);

}  // namespace gpudays
