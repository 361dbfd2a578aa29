// Writes a transformer language model (gpt_neox, roberta) as a model file in the catalog's schema
// (docs/catalog.md), so that a model `fit` invents can be planned, benchmarked and trained like a
// catalog model (`--model-file`). Reading stays in catalog/model_loader.h.
#pragma once

#include <string>

#include "catalog/model_spec.h"

namespace gpudays {

// The TOML text; load_model_file() of it gives back `model` (without source_path). Throws
// InputError for another family.
std::string transformer_model_toml(const ModelSpec& model, const std::string& provenance);

}  // namespace gpudays
