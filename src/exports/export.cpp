// Export formats: the backend vocabulary, the family facts the exports share, and gpudays' own run
// file. The HuggingFace form is export_hf.cpp's, the DeepSpeed form export_deepspeed.cpp's.
#include "exports/export.h"

#include <sstream>

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "common/error.h"

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
std::string hf_layer_class(Family family) {
  return std::string(family_traits(family).hf_layer_class);
}

bool decoupled_weight_decay(const RecipeSpec& recipe) {
  return recipe.optimizer == OptimizerKind::kAdamW;
}

std::string run_config_toml(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  std::ostringstream out;
  out << "# gpudays run configuration, for the trainer: gpudays train --config FILE\n";
  out << fmt::format("model = \"{}\"\n", r.model->name);
  out << fmt::format("gpu = \"{}\"\nnum_nodes = {}\ngpus_per_node = {}\n\n",
                     r.gpu,
                     r.cluster.num_nodes,
                     r.cluster.gpus_per_node);
  out << "[methods]\n";
  out << fmt::format(
      "free_lunch = {}\nactivation_checkpointing = {}\n", m.free_lunch, m.activation_checkpointing);
  out << fmt::format("sharding = \"{}\"\noffloading = {}\n\n", to_string(m.sharding), m.offloading);
  out << "[batch]\n";
  out << fmt::format("global_batch = {}\nmicro_batch_size = {}\ngrad_acc_steps = {}\n",
                     r.model->recipe.global_batch,
                     r.config.micro_batch_size,
                     r.config.grad_acc_steps);
  out << "\n# The recipe's schedule; edit to override (steps, rates, warm-up, clipping norm).\n";
  out << "[schedule]\n";
  out << fmt::format("steps = {}\nlr = {}\nmin_lr = {}\nwarmup_steps = {}\nclip_grad_norm = {}\n\n",
                     r.model->recipe.train_steps,
                     r.model->recipe.lr,
                     r.model->recipe.min_lr,
                     r.model->recipe.warmup_steps,
                     r.model->recipe.clip_grad_norm);
  out << "# The run's own settings (trainer/run_file.h); intervals in optimizer steps.\n";
  out << "[train]\nseed = 1234\ncheckpoint_interval = 1000\nkeep_checkpoints = 3\n";
  out << "eval_interval = 1000\neval_samples = 64\nlog_interval = 1\n\n";
  out << "[data]\n# path = \"tokens.u16\"  # or gpudays train --data PREFIX\neval_fraction = "
         "0.01\n";
  return out.str();
}

}  // namespace gpudays
