// ModelSpec -> model TOML file, the inverse of model_loader.cpp: [arch] from the family key map
// (family_traits.cpp), [recipe] and [reported] field by field. Round trip in model_file_test.cpp.
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "catalog/family_traits.h"
#include "catalog/model_loader.h"
#include "common/sha256.h"

namespace gpudays {
namespace {

// A TOML float: the shortest text that reads back exactly, with a decimal point when it has no
// exponent (TOML reads "1" as an integer).
std::string toml_float(double v) {
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

// A TOML basic string.
std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string toml_value(const ArchSpec& a, const ArchMember& member) {
  return std::visit(
      [&](auto field) -> std::string {
        using T = std::remove_reference_t<decltype(a.*field)>;
        if constexpr (std::is_same_v<T, double>) {
          return toml_float(a.*field);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("[{}]", fmt::join(a.*field, ", "));
        } else {
          return fmt::format("{}", a.*field);  // int64_t; bool as true or false
        }
      },
      member);
}

std::string arch_toml(const ModelSpec& m) {
  std::string out = "[arch]\n";
  for (const ArchKey& key : family_traits(m.family).keys) {
    if (key.toml.empty()) continue;  // a constant of the family
    out += fmt::format("{} = {}\n", key.toml, toml_value(m.arch, key.member));
  }
  return out;
}

std::string recipe_toml(const RecipeSpec& r) {
  std::string out = fmt::format(
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
  // Only wsd has a decay length, so the other recipes' text (and digest) stays as it was.
  if (r.schedule == ScheduleKind::kWsd) out += fmt::format("decay_steps = {}\n", r.decay_steps);
  return out;
}

std::string reported_toml(const ReportedRun& run) {
  std::string out =
      fmt::format("[reported]\ngpus = {}\ndays = {}\n", run.gpus, toml_float(run.days));
  if (!run.gpu.empty()) out += fmt::format("gpu = {}\n", toml_string(run.gpu));
  if (!run.accelerator.empty())
    out += fmt::format("accelerator = {}\n", toml_string(run.accelerator));
  return out + fmt::format("source = {}\n", toml_string(run.source));
}

}  // namespace

std::string model_toml(const ModelSpec& model) {
  std::string out =
      fmt::format("name = {}\nfamily = \"{}\"\n", toml_string(model.name), to_string(model.family));
  if (!model.hf_name.empty()) out += fmt::format("hf_name = {}\n", toml_string(model.hf_name));
  out += fmt::format("\n{}\n{}", arch_toml(model), recipe_toml(model.recipe));
  if (model.reported) out += fmt::format("\n{}", reported_toml(*model.reported));
  return out;
}

// The digest hashes this text: a change to what it writes (a new key, another number format)
// changes every model's digest, and needs a results schema whose upgrade re-keys stored trials.
std::string model_identity_toml(const ModelSpec& model) {
  return fmt::format("family = \"{}\"\n\n{}\n{}",
                     to_string(model.family),
                     arch_toml(model),
                     recipe_toml(model.recipe));
}

std::string model_digest(const ModelSpec& model) {
  return sha256_hex(model_identity_toml(model));
}

}  // namespace gpudays
