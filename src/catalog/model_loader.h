// Reads a model catalog file (configs/models/<name>.toml; schema in docs/catalog.md) into a
// ModelSpec and checks that its shapes are consistent, and writes one. Errors name the file and
// the field.
#pragma once

#include <string>

#include "catalog/model_spec.h"

namespace gpudays {

ModelSpec load_model_file(const std::string& path);
// A model file's text; `origin` names it in errors (and becomes its source_path).
ModelSpec parse_model_toml(const std::string& text, const std::string& origin);
// The model file of `model` (model_writer.cpp): every key of its family's map and of the recipe,
// so that load_model_file reads back the same ModelSpec (all but source_path).
std::string model_toml(const ModelSpec& model);
// What identifies a model, whatever it is called: its family, [arch] and [recipe] exactly as
// model_toml writes them (no name, HuggingFace id or reported run). Two models that train the same
// network the same way have the same identity.
std::string model_identity_toml(const ModelSpec& model);
// SHA-256 (common/sha256.h) of model_identity_toml, 64 hex digits: the key of a model's trials in
// the results database (results/trial_record.h).
std::string model_digest(const ModelSpec& model);
void validate_model(const ModelSpec& model);  // throws InputError naming the field

}  // namespace gpudays
