// Exports a chosen configuration (a model's recipe with a method set, micro-batch and accumulation
// on a cluster) as HuggingFace TrainingArguments JSON, as a DeepSpeed configuration, or as
// gpudays' own run configuration for the trainer (TOML).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "catalog/model_spec.h"
#include "config/search_space.h"

namespace gpudays {

struct ExportRequest {
  const ModelSpec* model = nullptr;
  std::string gpu;  // catalog name
  ClusterShape cluster;
  Configuration config;
  bool tf32_available = false;  // free-lunch turns TF32 on only where the GPU has it
};

nlohmann::json deepspeed_config(const ExportRequest& request);  // null when not sharded by ZeRO
nlohmann::json hf_training_arguments(const ExportRequest& request);
std::string run_config_toml(const ExportRequest& request);

}  // namespace gpudays
