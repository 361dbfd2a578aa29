// Model catalog file parsing and validation; the [arch] keys are the family table's.
#include "catalog/model_loader.h"

#include <fmt/format.h>

#include "catalog/arch_fields.h"
#include "catalog/toml_fields.h"
#include "common/error.h"

namespace gpudays {
namespace {

// Every key of the family's map (family_traits.cpp), with its model TOML default.
ArchSpec read_arch(const TomlFields& t, Family family) {
  ArchSpec a;
  for (const ArchKey& key : family_traits(family).keys) {
    if (key.toml.empty()) {
      apply_default(key.member, key.toml_default, a);  // a constant of the family
    } else {
      read_arch_field(t, key.toml, key.toml_default, key.member, a);
    }
  }
  t.get_string_or("source", "");
  t.check_all_used();
  return a;
}

ScheduleKind parse_schedule(const TomlFields& t) {
  const std::string s = t.get_string("schedule");
  if (s == "cosine") return ScheduleKind::kCosine;
  if (s == "linear") return ScheduleKind::kLinear;
  if (s == "constant") return ScheduleKind::kConstant;
  if (s == "wsd") return ScheduleKind::kWsd;
  t.fail("schedule", fmt::format("'{}' is not one of cosine, linear, constant or wsd", s));
}

OptimizerKind parse_optimizer(const TomlFields& t) {
  const std::string s = t.get_string("optimizer");
  if (s == "adam") return OptimizerKind::kAdam;
  if (s == "adamw") return OptimizerKind::kAdamW;
  t.fail("optimizer", fmt::format("'{}' is not one of adam or adamw", s));
}

RecipeSpec read_recipe(const TomlFields& t) {
  RecipeSpec r;
  r.global_batch = t.get_int("global_batch");
  r.train_steps = t.get_int("train_steps");
  const std::string precision = t.get_string("precision");
  try {
    r.precision = parse_precision(precision);
  } catch (const InputError& e) {
    t.fail("precision", e.what());
  }
  r.optimizer = parse_optimizer(t);
  r.lr = t.get_double("lr");
  r.beta1 = t.get_double_or("beta1", 0.9);
  r.beta2 = t.get_double_or("beta2", 0.999);
  r.eps = t.get_double_or("eps", 1e-8);
  r.weight_decay = t.get_double_or("weight_decay", 0.0);
  r.schedule = parse_schedule(t);
  r.warmup_steps = t.get_int_or("warmup_steps", 0);
  r.decay_steps = t.get_int_or("decay_steps", 0);
  r.min_lr = t.get_double_or("min_lr", 0.0);
  r.clip_grad_norm = t.get_double_or("clip_grad_norm", 0.0);
  r.dropout = t.get_double_or("dropout", 0.0);
  r.mlm_probability = t.get_double_or("mlm_probability", 0.0);
  t.get_string_or("source", "");
  t.check_all_used();
  return r;
}

std::optional<ReportedRun> read_reported(const TomlFields& root) {
  auto t = root.table_or_none("reported");
  if (!t) return std::nullopt;
  ReportedRun run;
  run.gpus = t->get_int("gpus");
  run.days = t->get_double("days");
  run.gpu = t->get_string_or("gpu", "");
  run.accelerator = t->get_string_or("accelerator", "");
  run.source = t->get_string("source");
  t->check_all_used();
  return run;
}

// The model of a parsed model file; `origin` names it in errors.
ModelSpec read_model(const TomlFields& root, const std::string& origin) {
  ModelSpec m;
  m.source_path = origin;
  m.name = root.get_name("name");
  const std::string family = root.get_string("family");
  try {
    m.family = parse_family(family);
  } catch (const InputError& e) {
    root.fail("family", e.what());
  }
  m.hf_name = root.get_name_or("hf_name", "");
  m.arch = read_arch(root.table("arch"), m.family);
  m.recipe = read_recipe(root.table("recipe"));
  m.reported = read_reported(root);
  root.check_all_used();
  validate_model(m);  // first: the sizes below are then bounded, so their product is exact
  if (family_traits(m.family).seq_len_rule == SeqLenRule::kPatches) {
    const int64_t derived = patch_seq_len(m.arch);
    if (m.arch.seq_len != 0 && m.arch.seq_len != derived) {
      throw InputError(fmt::format("{} [arch]: seq_len: {} but (image_size/patch_size)^2 + 1 = {}",
                                   origin,
                                   m.arch.seq_len,
                                   derived));
    }
    m.arch.seq_len = derived;
  }
  return m;
}

}  // namespace

ModelSpec load_model_file(const std::string& path) {
  return read_model(TomlFields::parse_file(path), path);
}

ModelSpec parse_model_toml(const std::string& text, const std::string& origin) {
  return read_model(TomlFields::parse_text(text, origin), origin);
}

}  // namespace gpudays
