// Loading and saving a module's parameters (and buffers) as safetensors under their module names,
// which the model families choose to equal HuggingFace's. Loading is all-or-nothing: every
// missing, unexpected or mis-shaped tensor is listed in one InputError and the module is untouched.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <set>
#include <string>

#include "models/safetensors.h"

namespace gpudays::models {

struct LoadOptions {
  // Names a file may use for a module tensor: file name -> module name. Example: transformers 5
  // calls GPT-NeoX's output embedding lm_head.weight in memory, checkpoints call it
  // embed_out.weight.
  std::map<std::string, std::string> aliases;
  // File tensors the model does not use and that are skipped, e.g. tied duplicates
  // (lm_head.decoder.weight) or heads another class needs (roberta.pooler.*). Anything else
  // unexpected is an error.
  std::set<std::string> ignored;
};

// Parameters, then buffers, in registration order, under their dotted module names.
NamedTensors named_state(const torch::nn::Module& module);

void load_safetensors(torch::nn::Module& module,
                      const std::string& path,
                      const LoadOptions& options = {});
void save_safetensors(const torch::nn::Module& module, const std::string& path);

}  // namespace gpudays::models
