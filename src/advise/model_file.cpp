// The model file of a transformer language model: catalog/model_writer.cpp's, under a comment.
#include "advise/model_file.h"

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays {

std::string transformer_model_toml(const ModelSpec& model, const std::string& provenance) {
  if (!is_transformer_lm(model.family))
    throw InputError(fmt::format("{}: only gpt_neox and roberta models can be written, not {}",
                                 model.name,
                                 to_string(model.family)));
  return fmt::format("# {}\n{}", provenance, model_toml(model));
}

}  // namespace gpudays
