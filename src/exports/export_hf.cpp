// HuggingFace TrainingArguments (transformers 5 field names) for a configuration: the recipe's
// optimizer and schedule, precision, free-lunch (TF32, torch.compile), activation checkpointing,
// and the backend: a DeepSpeed configuration, FSDP2's fsdp_config, or neither (DDP).
#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "exports/export.h"

namespace gpudays {
namespace {

bool is_fsdp(Sharding s) {
  return s == Sharding::kFsdpShardGradOp || s == Sharding::kFsdpFullShard;
}

std::string hf_scheduler(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kCosine:
      return "cosine_with_min_lr";
    case ScheduleKind::kLinear:
      return "linear";
    case ScheduleKind::kConstant:
      return "constant_with_warmup";
    case ScheduleKind::kWsd:
      return "warmup_stable_decay";
  }
  return "linear";
}

// get_scheduler's scheduler_specific_kwargs: the floor of the cosine, the decay of wsd (its
// stable phase is what remains of max_steps).
nlohmann::json scheduler_kwargs(const RecipeSpec& recipe) {
  switch (recipe.schedule) {
    case ScheduleKind::kCosine:
      return {{"min_lr", recipe.min_lr}};
    case ScheduleKind::kWsd:
      return {{"num_decay_steps", recipe.decay_steps},
              {"decay_type", "linear"},
              {"min_lr_ratio", recipe.lr > 0.0 ? recipe.min_lr / recipe.lr : 0.0}};
    case ScheduleKind::kLinear:
    case ScheduleKind::kConstant:
      break;
  }
  return nlohmann::json::object();
}

// Without transformers' supports_gradient_checkpointing (ConvNeXt) the Trainer refuses
// activation_checkpointing; FSDP's own checkpointing wraps its layers instead.
bool hf_model_checkpoints(Family family) {
  return family_traits(family).hf_gradient_checkpointing;
}

// free-lunch's compilation: with CUDA graphs ("reduce-overhead"), as the planner and the trainer
// assume, except under activation checkpointing, where gpudays runs without graphs
// (engine/apply_methods.cpp).
std::string compile_mode(const MethodSet& m) {
  return m.activation_checkpointing ? "default" : "reduce-overhead";
}

// FSDP2 through accelerate (transformers 5: fsdp=true, everything in fsdp_config): full_shard
// reshards parameters after forward, shard_grad_op keeps them (ZeRO-2-like).
nlohmann::json fsdp_config(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  return {{"version", 2},
          {"reshard_after_forward", m.sharding == Sharding::kFsdpFullShard},
          {"cpu_offload", m.offloading},
          {"auto_wrap_policy", "TRANSFORMER_BASED_WRAP"},
          {"transformer_layer_cls_to_wrap", {hf_layer_class(*r.model)}},
          {"activation_checkpointing", m.activation_checkpointing}};
}

void set_optimizer(const ExportRequest& r, nlohmann::json& args) {
  const RecipeSpec& recipe = r.model->recipe;
  // adamw_torch_fused: free-lunch's fused AdamW. The Trainer has no L2-coupled Adam (export_notes).
  args["optim"] = r.config.methods.free_lunch ? "adamw_torch_fused" : "adamw_torch";
  args["learning_rate"] = recipe.lr;
  args["weight_decay"] = recipe.weight_decay;
  args["adam_beta1"] = recipe.beta1;
  args["adam_beta2"] = recipe.beta2;
  args["adam_epsilon"] = recipe.eps;
  args["max_grad_norm"] = recipe.clip_grad_norm;
  args["lr_scheduler_type"] = hf_scheduler(recipe.schedule);
  args["lr_scheduler_kwargs"] = scheduler_kwargs(recipe);
  args["warmup_steps"] = recipe.warmup_steps;
}

void set_methods(const ExportRequest& r, nlohmann::json& args) {
  const MethodSet& m = r.config.methods;
  const RecipeSpec& recipe = r.model->recipe;
  args["bf16"] = recipe.precision == Precision::kBf16;
  args["fp16"] = recipe.precision == Precision::kFp16;
  args["tf32"] = m.free_lunch && r.tf32_available;
  args["torch_compile"] = m.free_lunch;
  args["torch_compile_mode"] = m.free_lunch ? nlohmann::json(compile_mode(m)) : nullptr;
  // Under FSDP, checkpointing is fsdp_config's (the Trainer's would add an all-gather).
  args["activation_checkpointing"] =
      m.activation_checkpointing && !is_fsdp(m.sharding) && hf_model_checkpoints(r.model->family);
}

}  // namespace

nlohmann::json hf_training_arguments(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  nlohmann::json args;
  args["max_steps"] = r.model->recipe.train_steps;
  args["per_device_train_batch_size"] = r.config.micro_batch_size;
  args["gradient_accumulation_steps"] = r.config.grad_acc_steps;
  set_optimizer(r, args);
  set_methods(r, args);
  args["ddp_find_unused_parameters"] = false;
  args["fsdp"] = is_fsdp(m.sharding);
  args["fsdp_config"] = is_fsdp(m.sharding) ? fsdp_config(r) : nullptr;
  args["deepspeed"] = deepspeed_config(r);
  return args;
}

std::vector<std::string> export_notes(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  const RecipeSpec& recipe = r.model->recipe;
  std::vector<std::string> notes;
  if (m.free_lunch && r.model->family == Family::kMamba) {
    notes.push_back(
        "free-lunch's fused selective scan and causal convolution run in transformers' Mamba "
        "only when the packages mamba-ssm and causal-conv1d are installed; without them it "
        "takes the slow sequential path");
  }
  if (m.activation_checkpointing && !is_fsdp(m.sharding) &&
      !hf_model_checkpoints(r.model->family)) {
    notes.push_back(
        "transformers' ConvNeXt does not support activation checkpointing, so the export leaves "
        "it off (FSDP's can: --backend fsdp)");
  }
  if (m.offloading && is_fsdp(m.sharding)) {
    notes.push_back(
        "FSDP's cpu_offload keeps parameters and gradients on the CPU too, where gpudays "
        "offloads the optimizer state (and the parameters only when fully sharded)");
  }
  if (!decoupled_weight_decay(recipe) && recipe.weight_decay != 0.0 &&
      export_backend(m.sharding) != ExportBackend::kDeepSpeed) {
    notes.push_back(fmt::format(
        "the recipe's Adam adds its weight decay ({}) to the gradient, which no optim of the "
        "HuggingFace Trainer does; the export's {} decouples it (DeepSpeed's \"Adam\" with "
        "adam_w_mode false would not: --backend deepspeed)",
        recipe.weight_decay,
        m.free_lunch ? "adamw_torch_fused" : "adamw_torch"));
  }
  if (recipe.schedule == ScheduleKind::kWsd &&
      export_backend(m.sharding) == ExportBackend::kDeepSpeed) {
    notes.push_back(
        "DeepSpeed has no warmup-stable-decay schedule: its configuration leaves \"scheduler\" "
        "out, so the Trainer's warmup_stable_decay runs (a DeepSpeed launch without the "
        "Trainer needs its own)");
  }
  return notes;
}

}  // namespace gpudays
