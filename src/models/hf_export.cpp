// A model saved as transformers' save_pretrained saves it: config.json (written by the catalog's
// hf_config_of, torch-free) and model.safetensors, and the load options of hub checkpoints.
#include "models/hf_export.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "catalog/hf_config.h"
#include "common/error.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "models/layers.h"

namespace gpudays::models {

nlohmann::json hf_config_json(const ModelSpec& spec) {
  return hf_config_of(spec);
}

LoadOptions hf_load_options(Family family) {
  LoadOptions options;
  switch (family) {
    case Family::kGptNeox:
      options.aliases["lm_head.weight"] = "embed_out.weight";
      break;
    case Family::kRoberta:
      // Hub checkpoints (roberta-large) still hold the tied decoder, the pooler of RobertaModel
      // and the old position_ids buffer.
      options.ignored = {"lm_head.decoder.weight",
                         "lm_head.decoder.bias",
                         "roberta.pooler.dense.weight",
                         "roberta.pooler.dense.bias",
                         "roberta.embeddings.position_ids"};
      break;
    case Family::kMamba:
      // The original mamba_ssm checkpoints say "embedding" (HF MambaModel.load_hook renames it).
      options.aliases["backbone.embedding.weight"] = "backbone.embeddings.weight";
      break;
    default:
      break;
  }
  return options;
}

void save_pretrained(const torch::nn::Module& module,
                     const ModelSpec& spec,
                     const std::string& dir) {
  const nlohmann::json config = hf_config_json(spec);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("cannot create {}: {}", dir, ec.message()));
  save_safetensors(module, (std::filesystem::path(dir) / "model.safetensors").string());
  const std::string config_path = (std::filesystem::path(dir) / "config.json").string();
  write_file_atomically(config_path, json_text(config, 2) + "\n");  // IoError when it fails
}

}  // namespace gpudays::models
