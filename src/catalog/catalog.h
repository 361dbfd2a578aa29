// The catalog: every model and GPU file under a config directory (configs/ by default), with
// look-ups by name, alias or HuggingFace id, in any case, that name the valid choices when they
// fail.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"

namespace gpudays {

struct CatalogOptions {
  // Empty: $GPUDAYS_CONFIG_DIR, else share/gpudays beside an installed binary, else the source
  // tree's configs/ (a build that was not installed).
  std::string config_dir;
};

class Catalog {
 public:
  static Catalog load(const CatalogOptions& options);

  const std::vector<ModelSpec>& models() const { return models_; }
  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  // A model by name or HuggingFace id (`hf_name`), exact or ignoring case; nullptr when none.
  const ModelSpec* find_model(const std::string& name) const;
  const ModelSpec& model(const std::string& name) const;  // throws InputError listing names
  // The model a command names: exactly one of a catalog name (--model) or a file (--model-file).
  ModelSpec resolve_model(const std::string& name, const std::string& file) const;
  // The models a command names: catalog names or HuggingFace ids (each once) and model files
  // (read into `from_files`, which outlives the pointers; a name already taken is an InputError);
  // neither: every catalog model.
  std::vector<const ModelSpec*> resolve_models(const std::vector<std::string>& names,
                                               const std::vector<std::string>& files,
                                               std::deque<ModelSpec>& from_files) const;
  // A GPU by name or alias, exact or ignoring case; nullptr when none.
  const GpuSpec* find_gpu(const std::string& name_or_alias) const;
  const GpuSpec& gpu(const std::string& name_or_alias) const;
  std::vector<std::string> model_names() const;
  std::vector<std::string> gpu_names() const;  // names and aliases, each once
  const std::string& config_dir() const { return config_dir_; }

 private:
  std::string config_dir_;
  std::vector<ModelSpec> models_;
  std::vector<GpuSpec> gpus_;
};

// The directory a CatalogOptions resolves to, and where that choice came from.
struct ConfigDirChoice {
  std::string path;
  std::string origin;  // "--config-dir", "$GPUDAYS_CONFIG_DIR", "installed" or "source tree"
};
ConfigDirChoice choose_config_dir(const CatalogOptions& options);
std::string resolve_config_dir(const CatalogOptions& options);

// The *.toml files of a catalog directory (models/, gpus/, measurements/), sorted; InputError
// naming the directory when it cannot be listed, and naming an entry that is not a readable file
// (a dangling or looping link, a directory named x.toml): such an entry is never skipped.
std::vector<std::string> catalog_toml_files(const std::string& dir);

// The catalog of an installed binary: PREFIX/share/gpudays for PREFIX/bin/gpudays (the running
// program's), when it holds models/; empty otherwise.
std::string installed_config_dir();

}  // namespace gpudays
