// Reads a model catalog file (configs/models/<name>.toml; schema in docs/catalog.md) into a
// ModelSpec and checks that its shapes are consistent, and writes one. Errors name the file and
// the field.
#pragma once

#include <string>

#include "catalog/model_spec.h"

namespace gpudays {

ModelSpec load_model_file(const std::string& path);
// The model file of `model` (model_writer.cpp): every key of its family's map and of the recipe,
// so that load_model_file reads back the same ModelSpec (all but source_path).
std::string model_toml(const ModelSpec& model);
void validate_model(const ModelSpec& model);  // throws InputError naming the field

}  // namespace gpudays
