// Loading a sweep file with the catalog's checked TOML access, and the cells of its grid.
#include "sweep/sweep_grid.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "catalog/toml_fields.h"
#include "common/error.h"
#include "search_space/method_fields.h"
#include "sweep/search.h"

namespace gpudays {
namespace {

constexpr std::string_view kSchemaDoc = "docs/sweep.md";

// `check` on each value (which may resolve it: an alias to its catalog name); its InputError
// becomes the key's one-line error. Two entries that resolve to one value would run every cell
// twice: refused, naming both.
template <typename T, typename Check>
std::vector<T> checked(const TomlFields& t,
                       std::string_view key,
                       const std::vector<T>& given,
                       Check check) {
  if (given.empty()) t.fail(key, "an empty list");
  std::vector<T> values;
  for (const T& v : given) {
    try {
      values.push_back(check(v));
    } catch (const InputError& e) {
      t.fail(key, e.what());
    }
    const auto first = std::find(values.begin(), values.end() - 1, values.back());
    if (first != values.end() - 1) {
      t.fail(key,
             fmt::format("'{}' and '{}' are both {}; list it once",
                         given[static_cast<size_t>(first - values.begin())],
                         v,
                         values.back()));
    }
  }
  return values;
}

std::vector<int64_t> counts(const TomlFields& t, std::string_view key, int64_t max) {
  if (!t.has(key)) return {1};
  return checked(t, key, t.get_int_array(key), [&](int64_t n) {
    if (n < 1 || n > max) throw InputError(fmt::format("{} is not in [1, {}]", n, max));
    return n;
  });
}

std::string gpu_name(const Catalog& catalog, const std::string& name) {
  return is_host_cpu_name(name) ? std::string(kHostCpuName) : catalog.gpu(name).name;
}

// [pin]: a method field by its name (a flag true or false, a choice by its name) and
// micro_batch_size.
ConfigurationPin load_pin(const TomlFields& t) {
  ConfigurationPin pin;
  for (const MethodField& f : method_fields()) {
    const std::string key(f.name);
    if (!t.has(key)) continue;
    // Read first: the getters' own errors name the file, the table and the key already.
    const std::string text = f.kind() == MethodKind::kFlag
                                 ? (*t.get_optional_bool(key) ? "on" : "off")
                                 : t.get_string(key);
    try {
      pin.pin_text(f, text);
    } catch (const InputError& e) {
      t.fail(key, e.what());
    }
  }
  if (t.has("micro_batch_size")) {
    const int64_t micro = t.get_int("micro_batch_size");
    if (micro < 1) t.fail("micro_batch_size", fmt::format("{} is below 1", micro));
    pin.micro_batch_size = micro;
  }
  t.check_all_used(kSchemaDoc);
  return pin;
}

void load_models(const TomlFields& t, const Catalog& catalog, SweepGrid& g) {
  if (t.has("models")) {
    g.models = checked(t, "models", t.get_name_array_or("models"), [&](const std::string& m) {
      return catalog.resolve_model(m, "").name;
    });
  }
  if (t.has("model_files")) {
    const std::filesystem::path dir = std::filesystem::path(g.path).parent_path();
    g.model_files =
        checked(t, "model_files", t.get_string_array_or("model_files"), [&](const std::string& f) {
          const std::string path = std::filesystem::path(f).is_absolute() ? f : (dir / f).string();
          catalog.resolve_model("", path);  // a model file that loads
          return path;
        });
  }
  if (g.models.empty() && g.model_files.empty()) {
    t.fail("models", "missing (a list of catalog models, or model_files)");
  }
}

void load_run_settings(const TomlFields& t, SweepGrid& g) {
  g.strategy = t.get_string_or("strategy", g.strategy);
  g.timing = t.get_string_or("timing", g.timing);
  try {
    parse_search_strategy(g.strategy);
  } catch (const InputError& e) {
    t.fail("strategy", e.what());
  }
  if (g.timing != "whole" && g.timing != "parts")
    t.fail("timing", "must be \"parts\" or \"whole\"");
  g.timed_steps = t.get_int_or("steps", g.timed_steps);
  if (g.timed_steps < 3 || g.timed_steps > 1000) {
    t.fail("steps", fmt::format("{} is not in [3, 1000]", g.timed_steps));
  }
  g.memory_limit_bytes = t.get_int_or("memory_limit", 0);
  if (g.memory_limit_bytes != 0 && g.memory_limit_bytes < kMinMemoryLimitBytes) {
    t.fail("memory_limit", "neither 0 (the device's memory) nor at least 1 MiB (1048576)");
  }
  g.trial_timeout_s = t.get_double_or("trial_timeout", g.trial_timeout_s);
  if (!(g.trial_timeout_s > 0.0 && g.trial_timeout_s <= kMaxTrialTimeoutS)) {
    t.fail("trial_timeout", fmt::format("{} s is not in (0, 7 days]", g.trial_timeout_s));
  }
}

}  // namespace

SweepGrid load_sweep_grid(const std::string& path, const Catalog& catalog) {
  const TomlFields t = TomlFields::parse_file(path);
  SweepGrid g;
  g.path = path;
  load_models(t, catalog, g);
  if (!t.has("gpus")) t.fail("gpus", "missing (a list of catalog GPUs, or \"cpu\")");
  g.gpus = checked(t, "gpus", t.get_name_array_or("gpus"), [&](const std::string& gpu) {
    return gpu_name(catalog, gpu);
  });
  g.nodes = counts(t, "nodes", kMaxNodes);
  g.gpus_per_node = counts(t, "gpus_per_node", kMaxGpusPerNode);
  if (t.has("methods")) {
    g.methods = checked(t, "methods", t.get_string_array_or("methods"), [](const std::string& m) {
      parse_method_selection(m);
      return m;
    });
  }
  if (const auto pin = t.table_or_none("pin")) g.pin = load_pin(*pin);
  for (const std::string& m : g.methods) {
    try {
      combine_pins(parse_method_selection(m).pin, "methods " + m, g.pin, "[pin]");
    } catch (const InputError& e) {
      t.fail("pin", e.what());
    }
  }
  load_run_settings(t, g);
  t.check_all_used(kSchemaDoc);
  return g;
}

std::string SweepCell::model_label() const {
  return model.empty() ? model_file : model;
}

std::string SweepCell::describe() const {
  return fmt::format("{} on {} x {} {}, {}", model_label(), nodes, gpus_per_node, gpu, methods);
}

std::vector<SweepCell> sweep_cells(const SweepGrid& g) {
  std::vector<SweepCell> cells;
  std::vector<std::pair<std::string, std::string>> models;  // name, file
  for (const std::string& m : g.models) models.emplace_back(m, "");
  for (const std::string& f : g.model_files) models.emplace_back("", f);
  for (const auto& [model, file] : models) {
    for (const std::string& gpu : g.gpus) {
      for (int64_t nodes : g.nodes) {
        for (int64_t per_node : g.gpus_per_node) {
          for (const std::string& methods : g.methods) {
            cells.push_back({model, file, gpu, nodes, per_node, methods});
          }
        }
      }
    }
  }
  return cells;
}

BenchRequest cell_request(const SweepGrid& g, const SweepCell& cell, BenchRequest here) {
  BenchRequest r = std::move(here);
  r.model = cell.model;
  r.model_file = cell.model_file;
  r.device = cell.gpu == kHostCpuName ? "cpu" : "cuda";
  r.gpu = r.device == "cuda" ? cell.gpu : "";
  r.nodes = cell.nodes;
  r.gpus_per_node = cell.gpus_per_node;
  r.methods = cell.methods;
  r.pin = g.pin;
  r.strategy = g.strategy;
  r.timing = g.timing;
  r.timed_steps = g.timed_steps;
  r.memory_limit_bytes = g.memory_limit_bytes;
  r.trial_timeout_s = g.trial_timeout_s;
  return r;
}

}  // namespace gpudays
