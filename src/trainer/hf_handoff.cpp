// Checkpoint -> HuggingFace directory, sharded as save_pretrained shards.
#include "trainer/hf_handoff.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/safetensors.h"
#include "models/zoo.h"
#include "trainer/checkpoint_check.h"
#include "trainer/checkpoint_files.h"
#include "trainer/train_state.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

at::ScalarType export_dtype(Precision p) {
  return p == Precision::kBf16 ? at::kBFloat16 : p == Precision::kFp16 ? at::kHalf : at::kFloat;
}

std::string dtype_name(Precision p) {
  return p == Precision::kBf16 ? "bfloat16" : p == Precision::kFp16 ? "float16" : "float32";
}

// Consecutive tensors grouped into files of at most max_bytes (a larger tensor gets its own).
std::vector<models::NamedTensors> shard(const models::NamedTensors& tensors, int64_t max_bytes) {
  std::vector<models::NamedTensors> shards(1);
  int64_t bytes = 0;
  for (const auto& [name, t] : tensors) {
    const int64_t n = static_cast<int64_t>(t.nbytes());
    if (!shards.back().empty() && bytes + n > max_bytes) {
      shards.emplace_back();
      bytes = 0;
    }
    shards.back().emplace_back(name, t);
    bytes += n;
  }
  return shards;
}

void write_weights(const models::NamedTensors& tensors, const HfExportOptions& o, int64_t& files) {
  const std::vector<models::NamedTensors> shards = shard(tensors, o.max_shard_bytes);
  files = static_cast<int64_t>(shards.size());
  if (shards.size() == 1) {
    models::write_safetensors((fs::path(o.out_dir) / "model.safetensors").string(), shards[0]);
    return;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  int64_t total = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string file =
        fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
    models::write_safetensors((fs::path(o.out_dir) / file).string(), shards[i]);
    for (const auto& [name, t] : shards[i]) {
      weight_map[name] = file;
      total += static_cast<int64_t>(t.nbytes());
    }
  }
  const nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  write_file_atomically((fs::path(o.out_dir) / "model.safetensors.index.json").string(),
                        json_text(index, 2) + "\n");
}

}  // namespace

std::vector<at::Tensor> read_pretrained_parameters(const std::string& dir,
                                                   const std::vector<std::string>& names,
                                                   Family family) {
  // The file each tensor is in, under the module's name.
  std::map<std::string, std::string> file_of;
  const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(index_path)) {
    std::ifstream in(index_path);
    try {
      const nlohmann::json index = nlohmann::json::parse(in);
      for (const auto& [name, file] : index.at("weight_map").items()) {
        file_of[name] = (fs::path(dir) / file.get<std::string>()).string();
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: malformed ({})", index_path.string(), e.what()));
    }
  } else {
    const std::string single = (fs::path(dir) / "model.safetensors").string();
    const models::SafetensorsReader reader(single);
    for (const auto& [name, entry] : reader.entries()) file_of[name] = single;
  }
  for (const auto& [file_name, module_name] : models::hf_load_options(family).aliases) {
    if (file_of.count(file_name) && !file_of.count(module_name))
      file_of[module_name] = file_of[file_name];
  }
  std::map<std::string, std::unique_ptr<models::SafetensorsReader>> readers;
  std::vector<at::Tensor> out;
  for (const std::string& name : names) {
    const auto it = file_of.find(name);
    if (it == file_of.end()) throw InputError(fmt::format("{}: no weights for {}", dir, name));
    auto& reader = readers[it->second];
    if (!reader) reader = std::make_unique<models::SafetensorsReader>(it->second);
    std::string stored = name;
    for (const auto& [file_name, module_name] : models::hf_load_options(family).aliases) {
      if (module_name == name && !reader->contains(name)) stored = file_name;
    }
    out.push_back(reader->read(stored).to(at::kFloat));
  }
  return out;
}

std::string checkpoint_model_file(const std::string& checkpoint_dir, std::string& catalog_name) {
  const FoundCheckpoint found = read_checkpoint(checkpoint_dir);
  const auto text = [&](const char* key) {
    const nlohmann::json& v = found.state.extra.value(key, nlohmann::json(""));
    if (!v.is_string()) {
      throw InputError(
          fmt::format("{}/manifest.json: state.extra.{} is not a string", checkpoint_dir, key));
    }
    return v.get<std::string>();
  };
  catalog_name = text("model");
  const std::string file = text("model_file");
  if (file.find('/') != std::string::npos || file == "..") {
    throw InputError(
        fmt::format("{}/manifest.json: state.extra.model_file '{}' is not a file of the checkpoint",
                    checkpoint_dir,
                    file));
  }
  return file.empty() ? "" : (fs::path(checkpoint_dir) / file).string();
}

int64_t export_hf(const HfExportOptions& o, const ModelSpec& model) {
  read_checkpoint(o.checkpoint_dir);  // every file checks out
  models::ZooOptions zoo;
  zoo.param_options = at::TensorOptions().dtype(at::kFloat);
  models::ZooModel built = models::make_model(model, zoo);
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& item : built.module().named_parameters()) {
    names.push_back(item.key());
    shapes.push_back(item.value().sizes().vec());
  }
  check_model_tensors(o.checkpoint_dir, names, shapes);
  const std::vector<at::Tensor> weights = read_checkpoint_parameters(o.checkpoint_dir, names);
  const at::ScalarType dtype = export_dtype(model.recipe.precision);
  models::NamedTensors tensors;
  {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> params = built.module().parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(weights[i].view_as(params[i]));
    for (const auto& [name, t] : models::named_state(built.module())) {
      tensors.emplace_back(name, t.is_floating_point() ? t.to(dtype) : t);
    }
  }
  fs::create_directories(o.out_dir);
  int64_t files = 0;
  write_weights(tensors, o, files);
  nlohmann::json config = models::hf_config_json(model);
  config["dtype"] = dtype_name(model.recipe.precision);
  config["torch_dtype"] = dtype_name(model.recipe.precision);
  write_file_atomically((fs::path(o.out_dir) / "config.json").string(),
                        json_text(config, 2) + "\n");
  for (const char* name : kTokenizerFiles) {
    const fs::path source = fs::path(o.checkpoint_dir) / name;
    if (fs::exists(source)) {
      fs::copy_file(source, fs::path(o.out_dir) / name, fs::copy_options::overwrite_existing);
    }
  }
  return files;
}

}  // namespace gpudays
