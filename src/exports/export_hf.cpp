// HuggingFace TrainingArguments for a configuration, with transformers 5's field names or 4's (the
// reference benchmark pins 4.42): the recipe's optimizer and schedule, precision, free-lunch (TF32,
// torch.compile where chosen), activation checkpointing, and the backend: a DeepSpeed
// configuration, FSDP's (FSDP2 in 5, FSDP1 in 4), or neither (DDP).
#include <algorithm>

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

// transformers 4's get_wsd_schedule: the stable phase named (5 derives it from max_steps), and
// always a cosine decay (export_notes).
nlohmann::json wsd_kwargs_v4(const RecipeSpec& recipe) {
  const int64_t stable_steps =
      std::max<int64_t>(0, recipe.train_steps - recipe.warmup_steps - recipe.decay_steps);
  return {{"num_stable_steps", stable_steps},
          {"num_decay_steps", recipe.decay_steps},
          {"min_lr_ratio", recipe.lr > 0.0 ? recipe.min_lr / recipe.lr : 0.0}};
}

// get_scheduler's scheduler_specific_kwargs: the floor of the cosine, the decay of wsd (its
// stable phase is what remains of max_steps).
nlohmann::json scheduler_kwargs(const RecipeSpec& recipe, int transformers_major) {
  switch (recipe.schedule) {
    case ScheduleKind::kCosine:
      return {{"min_lr", recipe.min_lr}};
    case ScheduleKind::kWsd:
      if (transformers_major == 4) return wsd_kwargs_v4(recipe);
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
nlohmann::json fsdp2_config(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  return {{"version", 2},
          {"reshard_after_forward", m.sharding == Sharding::kFsdpFullShard},
          {"cpu_offload", m.offloading},
          {"auto_wrap_policy", "TRANSFORMER_BASED_WRAP"},
          {"transformer_layer_cls_to_wrap", {hf_layer_class(*r.model)}},
          {"activation_checkpointing", m.activation_checkpointing}};
}

// FSDP1 through accelerate (transformers 4): the strategy, offloading and wrapping in the `fsdp`
// option string, the wrapped class and FSDP's own checkpointing in fsdp_config.
std::string fsdp1_options(const MethodSet& m) {
  std::string options =
      m.sharding == Sharding::kFsdpFullShard ? "full_shard auto_wrap" : "shard_grad_op auto_wrap";
  if (m.offloading) options += " offload";
  return options;
}

nlohmann::json fsdp1_config(const ExportRequest& r) {
  return {{"transformer_layer_cls_to_wrap", {hf_layer_class(*r.model)}},
          {"activation_checkpointing", r.config.methods.activation_checkpointing}};
}

void set_fsdp(const ExportRequest& r, nlohmann::json& args) {
  const MethodSet& m = r.config.methods;
  const bool fsdp = is_fsdp(m.sharding);
  if (r.transformers_major == 4) {
    args["fsdp"] = fsdp ? fsdp1_options(m) : "";
    args["fsdp_config"] = fsdp ? fsdp1_config(r) : nullptr;
    return;
  }
  args["fsdp"] = fsdp;
  args["fsdp_config"] = fsdp ? fsdp2_config(r) : nullptr;
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
  args["lr_scheduler_kwargs"] = scheduler_kwargs(recipe, r.transformers_major);
  args["warmup_steps"] = recipe.warmup_steps;
}

void set_methods(const ExportRequest& r, nlohmann::json& args) {
  const MethodSet& m = r.config.methods;
  const RecipeSpec& recipe = r.model->recipe;
  args["bf16"] = recipe.precision == Precision::kBf16;
  args["fp16"] = recipe.precision == Precision::kFp16;
  args["tf32"] = m.free_lunch && r.tf32_available;
  args["torch_compile"] = r.torch_compile;
  args["torch_compile_mode"] = r.torch_compile ? nlohmann::json(compile_mode(m)) : nullptr;
  // Under FSDP, checkpointing is fsdp_config's (the Trainer's would add an all-gather; transformers
  // 4 refuses both at once).
  const char* checkpointing =
      r.transformers_major == 4 ? "gradient_checkpointing" : "activation_checkpointing";
  args[checkpointing] =
      m.activation_checkpointing && !is_fsdp(m.sharding) && hf_model_checkpoints(r.model->family);
}

}  // namespace

nlohmann::json hf_training_arguments(const ExportRequest& r) {
  nlohmann::json args;
  args["max_steps"] = r.model->recipe.train_steps;
  args["per_device_train_batch_size"] = r.config.micro_batch_size;
  args["gradient_accumulation_steps"] = r.config.grad_acc_steps;
  set_optimizer(r, args);
  set_methods(r, args);
  args["ddp_find_unused_parameters"] = false;
  set_fsdp(r, args);
  args["deepspeed"] = deepspeed_config(r);
  return args;
}

}  // namespace gpudays
