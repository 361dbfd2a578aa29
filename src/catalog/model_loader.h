// Reads a model catalog file (configs/models/<name>.toml; schema in docs/catalog.md) into a
// ModelSpec and checks that its shapes are consistent. Errors name the file and the field.
#pragma once

#include <string>

#include "catalog/model_spec.h"

namespace gpudays {

ModelSpec load_model_file(const std::string& path);
void validate_model(const ModelSpec& model);  // throws InputError naming the field

}  // namespace gpudays
