// Export formats. Field names are those of HuggingFace TrainingArguments and of DeepSpeed's
// configuration schema; the FSDP names map to TrainingArguments' fsdp options.
#include "bench/export.h"

#include <sstream>

#include <fmt/format.h>

namespace gpudays {
namespace {

bool is_fsdp(Sharding s) {
  return s == Sharding::kFsdpShardGradOp || s == Sharding::kFsdpFullShard;
}

bool is_zero(Sharding s) {
  return s == Sharding::kZero1 || s == Sharding::kZero2 || s == Sharding::kZero3;
}

std::string hf_scheduler(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kCosine:
      return "cosine_with_min_lr";
    case ScheduleKind::kLinear:
      return "linear";
    case ScheduleKind::kConstant:
      return "constant_with_warmup";
  }
  return "linear";
}

}  // namespace

nlohmann::json deepspeed_config(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  if (!is_zero(m.sharding)) return nullptr;
  const RecipeSpec& recipe = r.model->recipe;
  nlohmann::json ds;
  ds["train_batch_size"] = recipe.global_batch;
  ds["train_micro_batch_size_per_gpu"] = r.config.micro_batch_size;
  ds["gradient_accumulation_steps"] = r.config.grad_acc_steps;
  ds["gradient_clipping"] = recipe.clip_grad_norm;
  ds["fp16"] = {{"enabled", recipe.precision == Precision::kFp16},
                {"loss_scale", 0},
                {"loss_scale_window", 1000},
                {"initial_scale_power", 16},
                {"hysteresis", 2},
                {"min_loss_scale", 1}};
  ds["bf16"] = {{"enabled", recipe.precision == Precision::kBf16}};
  ds["optimizer"] = {{"type", "Adam"},
                     {"params",
                      {{"lr", recipe.lr},
                       {"betas", {recipe.beta1, recipe.beta2}},
                       {"eps", recipe.eps},
                       {"weight_decay", recipe.weight_decay},
                       {"adam_w_mode", recipe.optimizer == OptimizerKind::kAdamW}}}};
  nlohmann::json zero = {{"stage", sharding_stage(m.sharding)}};
  if (sharding_stage(m.sharding) >= 2) {
    zero["overlap_comm"] = true;
    zero["contiguous_gradients"] = true;
  }
  if (m.offloading) {
    zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (sharding_stage(m.sharding) == 3) {
      zero["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
    }
  }
  ds["zero_optimization"] = zero;
  return ds;
}

nlohmann::json hf_training_arguments(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  const RecipeSpec& recipe = r.model->recipe;
  nlohmann::json args;
  args["max_steps"] = recipe.train_steps;
  args["per_device_train_batch_size"] = r.config.micro_batch_size;
  args["gradient_accumulation_steps"] = r.config.grad_acc_steps;
  args["learning_rate"] = recipe.lr;
  args["weight_decay"] = recipe.weight_decay;
  args["adam_beta1"] = recipe.beta1;
  args["adam_beta2"] = recipe.beta2;
  args["adam_epsilon"] = recipe.eps;
  args["max_grad_norm"] = recipe.clip_grad_norm;
  args["lr_scheduler_type"] = hf_scheduler(recipe.schedule);
  args["lr_scheduler_kwargs"] = recipe.schedule == ScheduleKind::kCosine
                                    ? nlohmann::json{{"min_lr", recipe.min_lr}}
                                    : nlohmann::json::object();
  args["warmup_steps"] = recipe.warmup_steps;
  args["gradient_checkpointing"] = m.activation_checkpointing;
  args["bf16"] = recipe.precision == Precision::kBf16;
  args["fp16"] = recipe.precision == Precision::kFp16;
  args["tf32"] = m.free_lunch && r.tf32_available;
  args["torch_compile"] = m.free_lunch;
  args["ddp_find_unused_parameters"] = false;
  args["fsdp"] = "";
  args["fsdp_config"] = nullptr;
  if (is_fsdp(m.sharding)) {
    std::string options = m.sharding == Sharding::kFsdpFullShard ? "full_shard" : "shard_grad_op";
    options += " auto_wrap";
    if (m.offloading) options += " offload";
    args["fsdp"] = options;
    args["fsdp_config"] = {{"transformer_layer_cls_to_wrap", nlohmann::json::array()}};
  }
  args["deepspeed"] = deepspeed_config(r);
  return args;
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
