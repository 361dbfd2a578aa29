// What an export cannot express of its configuration, one sentence each (`note:` lines on
// standard error): kernels that need extra packages, checkpointing a family's HF model lacks,
// offloading and weight decay each target does differently, schedules a target lacks.
#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "exports/export.h"

namespace gpudays {
namespace {

bool is_fsdp(Sharding s) {
  return export_backend(s) == ExportBackend::kFsdp;
}

bool hf_model_checkpoints(Family family) {
  return family_traits(family).hf_gradient_checkpointing;
}

void add_compile_notes(const ExportRequest& r, std::vector<std::string>& notes) {
  const MethodSet& m = r.config.methods;
  if (m.free_lunch && r.model->family == Family::kMamba) {
    notes.push_back(
        "free-lunch's fused selective scan and causal convolution run in transformers' Mamba "
        "only when the packages mamba-ssm and causal-conv1d are installed; without them it "
        "takes the slow sequential path");
  }
}

void add_schedule_notes(const ExportRequest& r, std::vector<std::string>& notes) {
  const RecipeSpec& recipe = r.model->recipe;
  if (recipe.schedule != ScheduleKind::kWsd) return;
  if (export_backend(r.config.methods.sharding) == ExportBackend::kDeepSpeed) {
    notes.push_back(
        "DeepSpeed has no warmup-stable-decay schedule: its configuration leaves \"scheduler\" "
        "out, so the Trainer's warmup_stable_decay runs (a DeepSpeed launch without the "
        "Trainer needs its own)");
  }
}

}  // namespace

std::vector<std::string> export_notes(const ExportRequest& r) {
  const MethodSet& m = r.config.methods;
  const RecipeSpec& recipe = r.model->recipe;
  std::vector<std::string> notes;
  add_compile_notes(r, notes);
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
  add_schedule_notes(r, notes);
  return notes;
}

std::vector<std::string> hf_export_notes(const ExportRequest& r) {
  std::vector<std::string> notes;
  if (r.config.methods.free_lunch && !r.torch_compile) {
    notes.push_back(
        r.model->family == Family::kMamba
            ? "torch_compile is off: Mamba is never exported compiled (transformers' Mamba "
              "calls mamba-ssm's kernels, which torch.compile does not trace)"
            : "torch_compile is off: only a measured free-lunch (--source bench) turns it on "
              "(--torch-compile on asks for it)");
  }
  const RecipeSpec& recipe = r.model->recipe;
  if (r.transformers_major == 4 && recipe.schedule == ScheduleKind::kWsd) {
    notes.push_back(fmt::format(
        "transformers 4's warmup_stable_decay decays by a cosine over the last {} steps, where "
        "the recipe decays linearly (transformers 5 has decay_type)",
        recipe.decay_steps));
  }
  return notes;
}

}  // namespace gpudays
