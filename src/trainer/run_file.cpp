// The run file: written table by table beside the reader of each, which uses TomlFields (every
// table's keys checked, unknown ones rejected). Defaults are the structs' in run_file.h.
#include "trainer/run_file.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "catalog/model_spec.h"
#include "catalog/toml_fields.h"
#include "common/error.h"
#include "search_space/method_fields.h"

namespace gpudays {
namespace {

// TomlFields' unknown-key error points to the catalog's documentation; a run file's keys are
// documented in docs/train.md.
void check_run_file_keys(const TomlFields& t) {
  try {
    t.check_all_used("docs/train.md");
  } catch (const InputError& e) {
    std::string message = e.what();
    const std::string catalog_doc = "docs/catalog.md";
    if (const size_t at = message.find(catalog_doc); at != std::string::npos) {
      message.replace(at, catalog_doc.size(), "docs/train.md");
    }
    throw InputError(message);
  }
}

int64_t positive(const TomlFields& t,
                 std::string_view key,
                 int64_t fallback,
                 int64_t low,
                 int64_t high = INT64_MAX) {
  const int64_t v = t.get_int_or(key, fallback);
  if (v < low) t.fail(key, fmt::format("must be at least {}", low));
  if (v > high) t.fail(key, fmt::format("must be at most {}, is {}", high, v));
  return v;
}

// [methods]: each field under its name, a flag as a bool and a choice as its name; absent: off.
void read_methods(const TomlFields& t, MethodSet& m) {
  for (const MethodField& f : method_fields()) {
    if (f.kind() == MethodKind::kFlag) {
      f.set_flag(m, t.get_bool_or(f.name, f.flag(MethodSet{})));
    } else {
      f.set_text(m, t.get_string_or(f.name, f.text(MethodSet{})));
    }
  }
  check_run_file_keys(t);
}

void write_methods(std::ostream& out, const MethodSet& m) {
  out << "[methods]\n";
  for (const MethodField& f : method_fields()) {
    if (f.kind() == MethodKind::kFlag) {
      out << fmt::format("{} = {}\n", f.name, f.flag(m));
    } else {
      out << fmt::format("{} = \"{}\"\n", f.name, f.text(m));
    }
  }
  out << "\n";
}

void write_batch(std::ostream& out, const RunFile& r) {
  out << "[batch]\n";
  out << fmt::format("global_batch = {}\nmicro_batch_size = {}\ngrad_acc_steps = {}\n\n",
                     r.global_batch,
                     r.micro_batch_size,
                     r.grad_acc_steps);
}

void read_batch(const TomlFields& t, RunFile& r) {
  r.global_batch = positive(t, "global_batch", 0, 1);
  r.micro_batch_size = positive(t, "micro_batch_size", 1, 1);
  r.grad_acc_steps = positive(t, "grad_acc_steps", 1, 1);
  // Each a part of the global batch (so that their products with a rank count cannot overflow).
  for (const auto& [key, value] : {std::pair{"micro_batch_size", r.micro_batch_size},
                                   std::pair{"grad_acc_steps", r.grad_acc_steps}}) {
    if (value > r.global_batch) {
      t.fail(key, fmt::format("{} is more than the global batch {}", value, r.global_batch));
    }
  }
  check_run_file_keys(t);
}

void read_schedule(const TomlFields& t, ScheduleOverrides& s) {
  if (t.has("steps")) s.steps = positive(t, "steps", 1, 1, kMaxTrainSteps);
  if (t.has("warmup_steps")) s.warmup_steps = positive(t, "warmup_steps", 0, 0, kMaxTrainSteps);
  for (const auto& [key, value] : {std::pair{"lr", &s.lr},
                                   std::pair{"min_lr", &s.min_lr},
                                   std::pair{"clip_grad_norm", &s.clip_grad_norm}}) {
    if (!t.has(key)) continue;
    *value = t.get_double(key);
    if (!(**value >= 0.0)) t.fail(key, fmt::format("must be >= 0, is {}", **value));
  }
  check_run_file_keys(t);
}

void write_schedule(std::ostream& out, const ScheduleOverrides& s) {
  if (s == ScheduleOverrides{}) return;
  out << "# The recipe's schedule; edit to override (steps, rates, warm-up, clipping norm).\n";
  out << "[schedule]\n";
  if (s.steps) out << fmt::format("steps = {}\n", *s.steps);
  if (s.lr) out << fmt::format("lr = {}\n", *s.lr);
  if (s.min_lr) out << fmt::format("min_lr = {}\n", *s.min_lr);
  if (s.warmup_steps) out << fmt::format("warmup_steps = {}\n", *s.warmup_steps);
  if (s.clip_grad_norm) out << fmt::format("clip_grad_norm = {}\n", *s.clip_grad_norm);
  out << "\n";
}

void read_train(const TomlFields& t, TrainSettings& s) {
  s.seed = static_cast<uint64_t>(positive(t, "seed", static_cast<int64_t>(s.seed), 0));
  s.checkpoint_interval = positive(t, "checkpoint_interval", s.checkpoint_interval, 0);
  s.keep_checkpoints = positive(t, "keep_checkpoints", s.keep_checkpoints, 1);
  s.eval_interval = positive(t, "eval_interval", s.eval_interval, 0);
  s.eval_samples = positive(t, "eval_samples", s.eval_samples, 1);
  s.log_interval = positive(t, "log_interval", s.log_interval, 1);
  check_run_file_keys(t);
}

void write_train(std::ostream& out, const TrainSettings& s) {
  out << "# The run's own settings (trainer/run_file.h); intervals in optimizer steps.\n";
  out << fmt::format("[train]\nseed = {}\ncheckpoint_interval = {}\nkeep_checkpoints = {}\n",
                     s.seed,
                     s.checkpoint_interval,
                     s.keep_checkpoints);
  out << fmt::format("eval_interval = {}\neval_samples = {}\nlog_interval = {}\n\n",
                     s.eval_interval,
                     s.eval_samples,
                     s.log_interval);
}

void read_data(const TomlFields& t, DataSettings& d) {
  d.path = t.get_string_or("path", "");
  d.eval_fraction = t.get_double_or("eval_fraction", d.eval_fraction);
  if (!(d.eval_fraction >= 0.0 && d.eval_fraction < 1.0)) {
    t.fail("eval_fraction", "must be in [0, 1)");
  }
  check_run_file_keys(t);
}

void write_data(std::ostream& out, const DataSettings& d) {
  out << "[data]\n";
  out << (d.path.empty()
              ? std::string("# path = \"tokens.u16\"  # or gpudays train --data PREFIX\n")
              : fmt::format("path = \"{}\"\n", d.path));
  out << fmt::format("eval_fraction = {}\n", d.eval_fraction);
}

}  // namespace

std::string run_file_toml(const RunFile& r) {
  std::ostringstream out;
  out << "# gpudays run configuration, for the trainer: gpudays train --config FILE\n";
  if (!r.model.empty()) out << fmt::format("model = \"{}\"\n", r.model);
  if (!r.model_file.empty()) out << fmt::format("model_file = \"{}\"\n", r.model_file);
  out << fmt::format(
      "gpu = \"{}\"\nnum_nodes = {}\ngpus_per_node = {}\n\n", r.gpu, r.num_nodes, r.gpus_per_node);
  write_methods(out, r.methods);
  write_batch(out, r);
  write_schedule(out, r.schedule);
  write_train(out, r.train);
  write_data(out, r.data);
  return out.str();
}

RunFile read_run_file(const std::string& path) {
  const TomlFields root = TomlFields::parse_file(path);
  RunFile r;
  r.model = root.get_string_or("model", "");
  r.model_file = root.get_string_or("model_file", "");
  if (!r.model_file.empty() && std::filesystem::path(r.model_file).is_relative()) {
    r.model_file = (std::filesystem::path(path).parent_path() / r.model_file).string();
  }
  if (r.model.empty() && r.model_file.empty()) root.fail("model", "is required (or model_file)");
  if (!r.model.empty() && !r.model_file.empty()) {
    root.fail("model", "and model_file both given: give one (the catalog's name or a model file)");
  }
  r.gpu = root.get_string("gpu");
  r.num_nodes = positive(root, "num_nodes", 1, 1);
  r.gpus_per_node = positive(root, "gpus_per_node", 1, 1);
  read_methods(root.table("methods"), r.methods);
  read_batch(root.table("batch"), r);
  if (auto t = root.table_or_none("schedule")) read_schedule(*t, r.schedule);
  if (auto t = root.table_or_none("train")) read_train(*t, r.train);
  if (auto t = root.table_or_none("data")) read_data(*t, r.data);
  check_run_file_keys(root);
  return r;
}

RecipeSpec apply_overrides(RecipeSpec recipe,
                           const ScheduleOverrides& o,
                           const std::string& run_path) {
  if (o.steps) {
    // wsd's decay keeps its share of the run (at least one step).
    const double decay_share =
        static_cast<double>(recipe.decay_steps) / static_cast<double>(recipe.train_steps);
    recipe.train_steps = *o.steps;
    if (recipe.schedule == ScheduleKind::kWsd)
      recipe.decay_steps =
          std::max<int64_t>(1, std::llround(decay_share * static_cast<double>(recipe.train_steps)));
  }
  if (o.lr) recipe.lr = *o.lr;
  if (o.min_lr) recipe.min_lr = *o.min_lr;
  if (o.warmup_steps) recipe.warmup_steps = *o.warmup_steps;
  if (o.clip_grad_norm) recipe.clip_grad_norm = *o.clip_grad_norm;
  // The overrides against what they leave of the recipe: the run file's [schedule] is to blame.
  if (recipe.warmup_steps >= recipe.train_steps) {
    throw InputError(fmt::format(
        "{} [schedule]: {} warm-up steps for a run of {} steps (set warmup_steps below steps)",
        run_path,
        recipe.warmup_steps,
        recipe.train_steps));
  }
  if (recipe.schedule == ScheduleKind::kWsd &&
      recipe.decay_steps > recipe.train_steps - recipe.warmup_steps) {
    throw InputError(fmt::format(
        "{} [schedule]: {} warm-up steps leave no room for the recipe's {}-step decay in a run of "
        "{} steps (set warmup_steps lower)",
        run_path,
        recipe.warmup_steps,
        recipe.decay_steps,
        recipe.train_steps));
  }
  if (recipe.min_lr > recipe.lr) {
    throw InputError(
        fmt::format("{} [schedule]: min_lr {} is above lr {}", run_path, recipe.min_lr, recipe.lr));
  }
  return recipe;
}

Configuration configuration_on(const RunFile& run, int64_t world) {
  Configuration c{run.methods, run.micro_batch_size, run.grad_acc_steps};
  int64_t per_step = 0;  // samples of one micro-step over all ranks
  int64_t samples = 0;   // ... and of one optimizer step, as the file has it
  const bool overflow = __builtin_mul_overflow(run.micro_batch_size, world, &per_step) ||
                        __builtin_mul_overflow(per_step, run.grad_acc_steps, &samples);
  if (!overflow && samples == run.global_batch) return c;
  if (overflow || per_step <= 0 || run.global_batch % per_step != 0) {
    throw InputError(
        fmt::format("the global batch {} does not split into micro-batches of {} on {} ranks",
                    run.global_batch,
                    run.micro_batch_size,
                    world));
  }
  c.grad_acc_steps = run.global_batch / per_step;
  return c;
}

}  // namespace gpudays
