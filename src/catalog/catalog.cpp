// Catalog loading (all *.toml files of configs/models and configs/gpus) and look-ups.
#include "catalog/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "catalog/gpu_loader.h"
#include "catalog/hf_config.h"
#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "common/build_info.h"
#include "common/error.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

// A *.toml entry of a catalog directory that is not a readable file (a dangling or looping link,
// a directory so named): an error naming it, never skipped.
void check_catalog_entry(const fs::directory_entry& entry) {
  const std::string path = entry.path().string();
  std::error_code ec;
  const fs::file_status status = entry.status(ec);  // follows a link
  if (status.type() == fs::file_type::not_found) {
    const fs::path target = fs::read_symlink(entry.path(), ec);
    throw InputError(fmt::format("{}: a link to {}, which does not exist", path, target.string()));
  }
  if (ec) throw InputError(fmt::format("{}: cannot read the file: {}", path, ec.message()));
  if (status.type() != fs::file_type::regular) {
    throw InputError(fmt::format("{}: not a file (each *.toml of the catalog must be one)", path));
  }
}

std::vector<std::string> toml_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(
        fmt::format("catalog directory {} does not exist (set --config-dir or "
                    "GPUDAYS_CONFIG_DIR)",
                    dir.string()));
  }
  return catalog_toml_files(dir.string());
}

// Each name once; a second names both files (the user keeps one).
template <typename Spec>
void check_unique(const std::vector<Spec>& specs, const char* what) {
  std::map<std::string, std::string> seen;  // name -> the file that gave it
  for (const Spec& s : specs) {
    const auto [it, fresh] = seen.emplace(s.name, s.source_path);
    if (!fresh) {
      throw InputError(fmt::format(
          "{}: {} name '{}' is used twice (also by {})", s.source_path, what, s.name, it->second));
    }
  }
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A GPU's name or alias names exactly one GPU (an alias another file also claims would make the
// second file silently win).
void check_unique_gpu_names(const std::vector<GpuSpec>& gpus) {
  std::map<std::string, std::string> owner;  // name or alias -> the GPU it names
  for (const GpuSpec& g : gpus) {
    std::set<std::string> own = {lower_case(g.name)};  // looked up ignoring case
    for (const std::string& alias : g.aliases) own.insert(lower_case(alias));
    for (const std::string& name : own) {
      const auto [it, fresh] = owner.emplace(name, g.name);
      if (!fresh) {
        throw InputError(
            fmt::format("{}: '{}' already names GPU '{}'", g.source_path, name, it->second));
      }
    }
  }
}

// A reported run names its GPU by catalog name (docs/catalog.md), as a published case does.
void check_reported_gpu(const ModelSpec& m, const Catalog& catalog) {
  if (!m.reported || m.reported->gpu.empty()) return;
  const std::string& name = m.reported->gpu;
  const GpuSpec* gpu = nullptr;
  try {
    gpu = &catalog.gpu(name);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{} [reported]: gpu: {}", m.source_path, e.what()));
  }
  if (gpu->name != name) {
    throw InputError(fmt::format("{} [reported]: gpu: '{}' is an alias; use the catalog name '{}'",
                                 m.source_path,
                                 name,
                                 gpu->name));
  }
}

constexpr const char* kExampleHfName = "EleutherAI/pythia-1b";

// Whether two names are the same ignoring case ("A100" and "a100").
bool same_name(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::vector<std::string> catalog_toml_files(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  std::vector<std::string> files;
  while (!ec && it != fs::directory_iterator()) {
    // A hidden name (an editor's lock file, `.#pythia-1b.toml`, is a dangling link) is not read.
    const bool hidden = it->path().filename().string().starts_with(".");
    if (!hidden && it->path().extension() == ".toml") {
      check_catalog_entry(*it);
      files.push_back(it->path().string());
    }
    it.increment(ec);
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the directory: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

std::string installed_config_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path share = self.parent_path().parent_path() / "share" / "gpudays";
  return fs::is_directory(share / "models", ec) ? share.string() : "";
}

ConfigDirChoice choose_config_dir(const CatalogOptions& options) {
  if (!options.config_dir.empty()) return {options.config_dir, "--config-dir"};
  if (const char* env = std::getenv("GPUDAYS_CONFIG_DIR"); env != nullptr && *env != '\0') {
    return {env, "$GPUDAYS_CONFIG_DIR"};
  }
  if (std::string installed = installed_config_dir(); !installed.empty()) {
    return {std::move(installed), "installed"};
  }
  return {kDefaultConfigDir, "source tree"};
}

std::string resolve_config_dir(const CatalogOptions& options) {
  return choose_config_dir(options).path;
}

std::vector<const ModelSpec*> Catalog::resolve_models(const std::vector<std::string>& names,
                                                      const std::vector<std::string>& files,
                                                      std::deque<ModelSpec>& from_files) const {
  std::vector<const ModelSpec*> chosen;
  if (names.empty() && files.empty()) {
    for (const ModelSpec& m : models_) chosen.push_back(&m);
    return chosen;
  }
  for (const std::string& name : names) {
    const ModelSpec* m = &model(name);
    if (std::find(chosen.begin(), chosen.end(), m) == chosen.end()) chosen.push_back(m);
  }
  for (const std::string& file : files) {
    const ModelSpec* m = &from_files.emplace_back(resolve_model("", file));
    const bool taken = std::any_of(chosen.begin(), chosen.end(), [&](const ModelSpec* other) {
      return other->name == m->name;
    });
    if (taken) throw InputError(fmt::format("{}: model '{}' is named twice", file, m->name));
    chosen.push_back(m);
  }
  return chosen;
}

Catalog Catalog::load(const CatalogOptions& options) {
  Catalog c;
  c.config_dir_ = resolve_config_dir(options);
  for (const auto& path : toml_files(fs::path(c.config_dir_) / "models")) {
    c.models_.push_back(load_model_file(path));
  }
  for (const auto& path : toml_files(fs::path(c.config_dir_) / "gpus")) {
    c.gpus_.push_back(load_gpu_file(path));
  }
  // Families in catalog order, then by size: pythia-14m before pythia-160m before pythia-1b.
  std::stable_sort(c.models_.begin(), c.models_.end(), [](const ModelSpec& a, const ModelSpec& b) {
    if (a.family != b.family) return a.family < b.family;
    return count_params(a).total < count_params(b).total;
  });
  check_unique(c.models_, "model");
  check_unique(c.gpus_, "gpu");
  check_unique_gpu_names(c.gpus_);
  // Without any GPU file there is nothing to check against: a look-up then says so.
  if (!c.gpus_.empty()) {
    for (const ModelSpec& m : c.models_) check_reported_gpu(m, c);
  }
  return c;
}

// Names as people type them: exact first, then ignoring case ("Pythia-1B", "A100"), then a
// model's HuggingFace hub id ("EleutherAI/pythia-1b"), also ignoring case.
const ModelSpec* Catalog::find_model(const std::string& name) const {
  for (const ModelSpec& m : models_) {
    if (m.name == name) return &m;
  }
  for (const ModelSpec& m : models_) {
    if (same_name(m.name, name)) return &m;
  }
  for (const ModelSpec& m : models_) {
    if (!m.hf_name.empty() && same_name(m.hf_name, name)) return &m;
  }
  return nullptr;
}

const ModelSpec& Catalog::model(const std::string& name) const {
  if (const ModelSpec* m = find_model(name)) return *m;
  if (models_.empty()) {
    throw InputError(fmt::format("unknown model '{}': there are no model files in {}",
                                 name,
                                 (fs::path(config_dir_) / "models").string()));
  }
  throw InputError(
      fmt::format("unknown model '{}'; valid: {} (or a HuggingFace id such as {}, or "
                  "--model-file PATH)",
                  name,
                  join_choices(model_names()),
                  kExampleHfName));
}

const GpuSpec* Catalog::find_gpu(const std::string& name_or_alias) const {
  for (const bool ignore_case : {false, true}) {
    const auto same = [&](const std::string& a) {
      return ignore_case ? same_name(a, name_or_alias) : a == name_or_alias;
    };
    for (const GpuSpec& g : gpus_) {
      if (same(g.name)) return &g;
    }
    for (const GpuSpec& g : gpus_) {
      if (std::any_of(g.aliases.begin(), g.aliases.end(), same)) return &g;
    }
  }
  return nullptr;
}

const GpuSpec& Catalog::gpu(const std::string& name_or_alias) const {
  if (const GpuSpec* g = find_gpu(name_or_alias)) return *g;
  if (gpus_.empty()) {
    throw InputError(fmt::format("unknown GPU '{}': there are no GPU files in {}",
                                 name_or_alias,
                                 (fs::path(config_dir_) / "gpus").string()));
  }
  throw InputError(
      fmt::format("unknown GPU '{}'; valid: {}", name_or_alias, join_choices(gpu_names())));
}

ModelSpec Catalog::resolve_model(const std::string& name, const std::string& file) const {
  if (!name.empty() && !file.empty()) {
    throw InputError("give either --model or --model-file, not both");
  }
  if (!file.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) {
      throw InputError(fmt::format(
          "model file {} is a directory; give a model TOML file or a config.json", file));
    }
    ModelSpec m = is_hf_config_path(file) ? load_hf_config(file, models_) : load_model_file(file);
    check_reported_gpu(m, *this);
    return m;
  }
  if (name.empty()) {
    throw InputError(fmt::format("--model is required; valid: {} (or --model-file PATH)",
                                 join_choices(model_names())));
  }
  return model(name);
}

std::vector<std::string> Catalog::model_names() const {
  std::vector<std::string> names;
  for (const ModelSpec& m : models_) names.push_back(m.name);
  return names;
}

std::vector<std::string> Catalog::gpu_names() const {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const GpuSpec& g : gpus_) {
    if (seen.insert(g.name).second) names.push_back(g.name);
    for (const auto& alias : g.aliases) {
      if (seen.insert(alias).second) names.push_back(alias);
    }
  }
  return names;
}

}  // namespace gpudays
