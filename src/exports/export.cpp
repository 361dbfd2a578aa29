// Export formats: the backend vocabulary, the family facts the exports share, and gpudays' own run
// file (written by trainer/run_file.h, beside its reader). The HuggingFace form is export_hf.cpp's,
// the DeepSpeed form export_deepspeed.cpp's.
#include "exports/export.h"

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "common/error.h"
#include "trainer/run_file.h"

namespace gpudays {

std::string to_string(ExportBackend backend) {
  switch (backend) {
    case ExportBackend::kDdp:
      return "ddp";
    case ExportBackend::kDeepSpeed:
      return "deepspeed";
    case ExportBackend::kFsdp:
      return "fsdp";
  }
  return "ddp";
}

ExportBackend parse_export_backend(const std::string& text) {
  for (ExportBackend b : {ExportBackend::kDeepSpeed, ExportBackend::kFsdp, ExportBackend::kDdp}) {
    if (text == to_string(b)) return b;
  }
  throw InputError(fmt::format("unknown backend '{}'; valid: deepspeed, fsdp, ddp", text));
}

ExportBackend export_backend(Sharding sharding) {
  switch (sharding) {
    case Sharding::kNone:
      return ExportBackend::kDdp;
    case Sharding::kZero1:
    case Sharding::kZero2:
    case Sharding::kZero3:
      return ExportBackend::kDeepSpeed;
    case Sharding::kFsdpShardGradOp:
    case Sharding::kFsdpFullShard:
      return ExportBackend::kFsdp;
  }
  return ExportBackend::kDdp;
}

// transformers 5.24: models/<family>/modeling_<family>.py (catalog/family_traits.cpp).
std::string hf_layer_class(const ModelSpec& model) {
  return std::string(hf_variant(model).layer_class);
}

bool decoupled_weight_decay(const RecipeSpec& recipe) {
  return recipe.optimizer == OptimizerKind::kAdamW;
}

std::string run_config_toml(const ExportRequest& r) {
  RunFile run;
  if (r.model_file.empty()) run.model = r.model->name;
  run.model_file = r.model_file;
  run.gpu = r.gpu;
  run.num_nodes = r.cluster.num_nodes;
  run.gpus_per_node = r.cluster.gpus_per_node;
  run.methods = r.config.methods;
  run.global_batch = r.model->recipe.global_batch;
  run.micro_batch_size = r.config.micro_batch_size;
  run.grad_acc_steps = r.config.grad_acc_steps;
  const RecipeSpec& recipe = r.model->recipe;  // written out, for the user to edit
  run.schedule = {
      recipe.train_steps, recipe.lr, recipe.min_lr, recipe.warmup_steps, recipe.clip_grad_norm};
  return run_file_toml(run);
}

}  // namespace gpudays
