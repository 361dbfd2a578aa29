// The model file of a transformer language model: [arch] and [recipe] as the loader reads them.
#include "advise/model_file.h"

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

// A TOML float: the shortest text that reads back exactly, with a decimal point when it has no
// exponent (TOML reads "1" as an integer).
std::string toml_float(double v) {
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string arch_toml(const ModelSpec& m) {
  const ArchSpec& a = m.arch;
  std::string out = fmt::format(
      "[arch]\nn_layers = {}\nd_model = {}\nn_heads = {}\nd_ffn = {}\nvocab_size = {}\n"
      "seq_len = {}\nmax_position_embeddings = {}\nlayer_norm_eps = {}\ninitializer_range = {}\n",
      a.n_layers,
      a.d_model,
      a.n_heads,
      a.d_ffn,
      a.vocab_size,
      a.seq_len,
      a.max_position_embeddings,
      toml_float(a.layer_norm_eps),
      toml_float(a.initializer_range));
  if (m.family == Family::kGptNeox) {
    out += fmt::format(
        "rotary_pct = {}\nrotary_emb_base = {}\ntie_word_embeddings = {}\n"
        "use_parallel_residual = {}\n",
        toml_float(a.rotary_pct),
        toml_float(a.rotary_emb_base),
        a.tie_word_embeddings,
        a.use_parallel_residual);
  } else {
    out += fmt::format(
        "type_vocab_size = {}\npad_token_id = {}\nbos_token_id = {}\n"
        "eos_token_id = {}\n",
        a.type_vocab_size,
        a.pad_token_id,
        a.bos_token_id,
        a.eos_token_id);
  }
  return out;
}

std::string recipe_toml(const RecipeSpec& r) {
  return fmt::format(
      "[recipe]\nglobal_batch = {}\ntrain_steps = {}\nprecision = \"{}\"\noptimizer = \"{}\"\n"
      "lr = {}\nbeta1 = {}\nbeta2 = {}\neps = {}\nweight_decay = {}\nschedule = \"{}\"\n"
      "warmup_steps = {}\nmin_lr = {}\nclip_grad_norm = {}\ndropout = {}\nmlm_probability = {}\n",
      r.global_batch,
      r.train_steps,
      to_string(r.precision),
      to_string(r.optimizer),
      toml_float(r.lr),
      toml_float(r.beta1),
      toml_float(r.beta2),
      toml_float(r.eps),
      toml_float(r.weight_decay),
      to_string(r.schedule),
      r.warmup_steps,
      toml_float(r.min_lr),
      toml_float(r.clip_grad_norm),
      toml_float(r.dropout),
      toml_float(r.mlm_probability));
}

}  // namespace

std::string transformer_model_toml(const ModelSpec& model, const std::string& provenance) {
  if (model.family != Family::kGptNeox && model.family != Family::kRoberta)
    throw InputError(fmt::format("{}: only gpt_neox and roberta models can be written, not {}",
                                 model.name,
                                 to_string(model.family)));
  return fmt::format("# {}\nname = \"{}\"\nfamily = \"{}\"\n\n{}\n{}",
                     provenance,
                     model.name,
                     to_string(model.family),
                     arch_toml(model),
                     recipe_toml(model.recipe));
}

}  // namespace gpudays
