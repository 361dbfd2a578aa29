// The compute-optimal ladder: architectures scaled from a template, tokens from parameters.
#include "advise/compute_optimal.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "catalog/param_count.h"
#include "common/error.h"

namespace gpudays {

double chinchilla_loss(double params, double tokens, const ChinchillaLossFit& fit) {
  return fit.e + fit.a / std::pow(params, fit.alpha) + fit.b / std::pow(tokens, fit.beta);
}

namespace {

// A gated (SwiGLU) MLP at the width of a 4d GELU MLP's parameters: 2/3 x 4d, rounded up to a
// multiple of 256 (Touvron et al. 2023, LLaMA, Sec. 2.2; Llama's `multiple_of`); grouped-query
// attention with the template's query heads per key/value head where they divide.
void scale_gated_mlp_and_groups(const ArchSpec& from, ArchSpec& to) {
  constexpr int64_t kMultipleOf = 256;
  to.d_ffn = (8 * to.d_model / 3 + kMultipleOf - 1) / kMultipleOf * kMultipleOf;
  const int64_t group = from.n_heads / from.key_value_heads();
  to.n_kv_heads = to.n_heads % group == 0 ? to.n_heads / group : to.n_heads;
}

}  // namespace

const ModelSpec& compute_optimal_template(const Catalog& catalog, const std::string& family) {
  if (family == "gpt_neox") return catalog.model("pythia-1b");
  if (family == "roberta") return catalog.model("roberta");
  if (family == "llama") return catalog.model("tinyllama-1.1b");
  constexpr const char* kValid =
      "valid: gpt_neox, roberta, llama, or a catalog transformer language model (`gpudays "
      "models`)";
  const ModelSpec* model = family.empty() ? nullptr : catalog.find_model(family);
  if (model == nullptr) {
    throw InputError(fmt::format("unknown compute-optimal family '{}'; {}", family, kValid));
  }
  if (!is_transformer_lm(model->family)) {
    throw InputError(fmt::format(
        "compute-optimal family '{}' is a {} model, not a transformer language model (the "
        "tokens-per-parameter rule is for language models); {}",
        family,
        to_string(model->family),
        kValid));
  }
  return *model;
}

ComputeOptimalModel compute_optimal_model(const ModelSpec& family_template,
                                          int64_t d_model,
                                          const ComputeOptimalOptions& options) {
  const Family family = family_template.family;
  if (!is_transformer_lm(family))
    throw InputError(fmt::format(
        "{} is a {} model; compute-optimal scaling (tokens per parameter) applies to the "
        "transformer language families gpt_neox, roberta and llama",
        family_template.name,
        to_string(family)));
  if (d_model < options.d_model_per_layer || d_model % options.d_model_per_layer != 0 ||
      d_model % options.head_dim != 0)
    throw InputError(fmt::format("d_model {} is not a multiple of {} and {}",
                                 d_model,
                                 options.d_model_per_layer,
                                 options.head_dim));
  ComputeOptimalModel out;
  ModelSpec& m = out.model;
  m = family_template;
  m.arch.d_model = d_model;
  m.arch.n_layers = d_model / options.d_model_per_layer;
  m.arch.n_heads = d_model / options.head_dim;
  m.arch.d_ffn = 4 * d_model;
  m.arch.head_dim = 0;  // d_model / n_heads
  if (m.arch.gated_ffn) scale_gated_mlp_and_groups(family_template.arch, m.arch);
  m.reported.reset();
  m.hf_name.clear();
  m.source_path.clear();
  m.name = fmt::format("{}-optimal-d{}-l{}", to_string(family), d_model, m.arch.n_layers);
  out.params = count_params(m).total;
  const double tokens_per_step =
      static_cast<double>(m.recipe.global_batch) * static_cast<double>(m.tokens_per_sample());
  const double wanted_tokens = options.tokens_per_param * static_cast<double>(out.params);
  m.recipe.train_steps = static_cast<int64_t>(std::ceil(wanted_tokens / tokens_per_step));
  // The template's warm-up as the same fraction of training.
  const double warmup_fraction = static_cast<double>(family_template.recipe.warmup_steps) /
                                 static_cast<double>(family_template.recipe.train_steps);
  m.recipe.warmup_steps =
      static_cast<int64_t>(std::round(warmup_fraction * static_cast<double>(m.recipe.train_steps)));
  const double decay_fraction = static_cast<double>(family_template.recipe.decay_steps) /
                                static_cast<double>(family_template.recipe.train_steps);
  if (m.recipe.schedule == ScheduleKind::kWsd)
    m.recipe.decay_steps = std::max<int64_t>(
        1, std::llround(decay_fraction * static_cast<double>(m.recipe.train_steps)));
  out.tokens = static_cast<double>(m.recipe.train_steps) * tokens_per_step;
  return out;
}

std::vector<int64_t> compute_optimal_ladder(const ComputeOptimalOptions& options) {
  std::vector<int64_t> rungs;
  for (int64_t d = 2 * options.d_model_step; d <= options.max_d_model; d += options.d_model_step)
    if (d % options.d_model_per_layer == 0 && d % options.head_dim == 0) rungs.push_back(d);
  return rungs;
}

}  // namespace gpudays
