// The DeepSpeed configuration of a ZeRO configuration: batch, precision, the recipe's optimizer and
// schedule (so that deepspeed.initialize alone trains as the recipe says), ZeRO stage and offload.
// With auto_values, "auto" wherever HuggingFace's Trainer fills the value from TrainingArguments
// (transformers/integrations/deepspeed.py, trainer_config_process and trainer_config_finalize).
#include <string>

#include "exports/export.h"

namespace gpudays {
namespace {

bool is_zero(Sharding s) {
  return s == Sharding::kZero1 || s == Sharding::kZero2 || s == Sharding::kZero3;
}

// A value, or "auto" for HF to fill in.
nlohmann::json value_or_auto(const ExportRequest& r, nlohmann::json value) {
  return r.auto_values ? nlohmann::json("auto") : value;
}

// DeepSpeed's optimizer names (deepspeed/runtime/config.py): "AdamW" is Adam with decoupled weight
// decay; "Adam" with adam_w_mode false adds the decay to the gradient (L2).
nlohmann::json optimizer(const ExportRequest& r) {
  const RecipeSpec& recipe = r.model->recipe;
  nlohmann::json params = {
      {"lr", value_or_auto(r, recipe.lr)},
      {"betas", value_or_auto(r, nlohmann::json::array({recipe.beta1, recipe.beta2}))},
      {"eps", value_or_auto(r, recipe.eps)},
      {"weight_decay", value_or_auto(r, recipe.weight_decay)}};
  if (decoupled_weight_decay(recipe)) return {{"type", "AdamW"}, {"params", params}};
  params["adam_w_mode"] = false;
  return {{"type", "Adam"}, {"params", params}};
}

// deepspeed/runtime/lr_schedules.py: WarmupCosineLR (ratios of each group's lr), WarmupDecayLR
// (linear to 0 at total_num_steps) and WarmupLR (then constant), every warm-up linear from 0 as
// HuggingFace's schedulers warm up.
nlohmann::json scheduler(const ExportRequest& r) {
  const RecipeSpec& recipe = r.model->recipe;
  nlohmann::json params = {{"warmup_num_steps", value_or_auto(r, recipe.warmup_steps)},
                           {"warmup_type", "linear"}};
  switch (recipe.schedule) {
    case ScheduleKind::kCosine:
      params["total_num_steps"] = value_or_auto(r, recipe.train_steps);
      params["warmup_min_ratio"] = 0.0;
      params["cos_min_ratio"] = recipe.lr > 0.0 ? recipe.min_lr / recipe.lr : 0.0;
      return {{"type", "WarmupCosineLR"}, {"params", params}};
    case ScheduleKind::kLinear:
      params["total_num_steps"] = value_or_auto(r, recipe.train_steps);
      params["warmup_min_lr"] = value_or_auto(r, 0.0);
      params["warmup_max_lr"] = value_or_auto(r, recipe.lr);
      return {{"type", "WarmupDecayLR"}, {"params", params}};
    case ScheduleKind::kConstant:
      params["warmup_min_lr"] = value_or_auto(r, 0.0);
      params["warmup_max_lr"] = value_or_auto(r, recipe.lr);
      return {{"type", "WarmupLR"}, {"params", params}};
    case ScheduleKind::kWsd:
      return nullptr;  // none in lr_schedules.py: the Trainer's own (export_notes)
  }
  return nullptr;
}

nlohmann::json zero_optimization(const MethodSet& m) {
  const int stage = sharding_stage(m.sharding);
  nlohmann::json zero = {{"stage", stage}};
  if (stage >= 2) {
    zero["overlap_comm"] = true;
    zero["contiguous_gradients"] = true;
  }
  if (m.offloading) {
    zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (stage == 3) zero["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
  }
  return zero;
}

}  // namespace

nlohmann::json deepspeed_config(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  if (!is_zero(m.sharding)) return nullptr;
  const RecipeSpec& recipe = r.model->recipe;
  nlohmann::json ds;
  ds["train_batch_size"] = value_or_auto(r, recipe.global_batch);
  ds["train_micro_batch_size_per_gpu"] = value_or_auto(r, r.config.micro_batch_size);
  ds["gradient_accumulation_steps"] = value_or_auto(r, r.config.grad_acc_steps);
  ds["gradient_clipping"] = value_or_auto(r, recipe.clip_grad_norm);
  ds["fp16"] = {{"enabled", value_or_auto(r, recipe.precision == Precision::kFp16)},
                {"loss_scale", 0},
                {"loss_scale_window", 1000},
                {"initial_scale_power", 16},
                {"hysteresis", 2},
                {"min_loss_scale", 1}};
  ds["bf16"] = {{"enabled", value_or_auto(r, recipe.precision == Precision::kBf16)}};
  ds["optimizer"] = optimizer(r);
  if (nlohmann::json s = scheduler(r); !s.is_null()) ds["scheduler"] = s;
  ds["zero_optimization"] = zero_optimization(m);
  return ds;
}

}  // namespace gpudays
