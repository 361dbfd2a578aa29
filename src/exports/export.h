// Exports a chosen configuration (a model's recipe with a method set, micro-batch and accumulation
// on a cluster) as HuggingFace TrainingArguments JSON (transformers 4's or 5's field names), as a
// DeepSpeed configuration, or as gpudays' own run configuration for the trainer (TOML). Choosing
// the configuration is the caller's; the backend follows from its sharding (export_backend below).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/model_spec.h"
#include "search_space/search_space.h"

namespace gpudays {

// Who runs the data parallelism: DeepSpeed ZeRO (zero_1..3), PyTorch FSDP2 through accelerate
// (fsdp_shard_grad_op, fsdp_full_shard), or plain DDP (no sharding).
enum class ExportBackend { kDdp, kDeepSpeed, kFsdp };

std::string to_string(ExportBackend backend);
ExportBackend parse_export_backend(const std::string& text);  // throws InputError with the choices
ExportBackend export_backend(Sharding sharding);              // the backend that runs it as named

struct ExportRequest {
  const ModelSpec* model = nullptr;
  std::string gpu;  // catalog name
  ClusterShape cluster;
  Configuration config;
  bool tf32_available = false;  // free-lunch turns TF32 on only where the GPU has it
  // DeepSpeed: "auto" for every value HuggingFace's Trainer fills in from TrainingArguments
  // (batch sizes, clipping, precision, optimizer and scheduler values), for use through HF only.
  bool auto_values = false;
  // The model file (absolute) when the model is not the catalog's: the run file names it, so that
  // `train` reads the same model.
  std::string model_file;
  // TrainingArguments' field names: transformers 5 (FSDP2, activation_checkpointing) or 4 (FSDP1,
  // gradient_checkpointing, the fsdp option string), exports/transformers_version.h.
  int transformers_major = 5;
  // torch_compile in TrainingArguments: the caller's choice (export's --torch-compile: on where
  // free-lunch was measured, never for Mamba); free-lunch alone does not turn it on.
  bool torch_compile = false;
};

nlohmann::json deepspeed_config(const ExportRequest& request);  // null when not sharded by ZeRO
nlohmann::json hf_training_arguments(const ExportRequest& request);
std::string run_config_toml(const ExportRequest& request);

// What the export cannot express of the configuration, one sentence each ("note: ..." lines for
// the user): free-lunch kernels that need extra packages, checkpointing a family's HF model lacks.
std::vector<std::string> export_notes(const ExportRequest& request);
// What TrainingArguments alone cannot express or leave out: torch_compile when off under
// free-lunch, transformers 4's cosine-only warmup_stable_decay.
std::vector<std::string> hf_export_notes(const ExportRequest& request);

// The class name of the family's repeated block in transformers (FSDP's wrapping unit).
std::string hf_layer_class(const ModelSpec& model);

// The recipe's weight decay is decoupled (AdamW, Loshchilov and Hutter 2019) rather than added to
// the gradient (L2, plain Adam). Which one each family's original code used: docs/bench.md.
bool decoupled_weight_decay(const RecipeSpec& recipe);

}  // namespace gpudays
