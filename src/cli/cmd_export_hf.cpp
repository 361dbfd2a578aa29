// `gpudays export-hf --checkpoint DIR --out DIR`: a training checkpoint as a HuggingFace directory
// (trainer/hf_handoff.h); the model is the one the checkpoint carries (its model file, or its
// catalog name).
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/output_files.h"
#include "trainer/hf_handoff.h"
#include "trainer/train_state.h"

namespace gpudays {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStagingPrefix = ".export-hf.staging.";

// The files an export writes (and a killed export's staging folder): --force replaces only these,
// never a folder of other files.
bool written_by_an_export(const std::string& name) {
  const bool weights = name.rfind("model", 0) == 0 && name.size() > std::strlen(".safetensors") &&
                       name.ends_with(".safetensors");
  if (name == "config.json" || name == "model.safetensors.index.json" || weights) return true;
  for (const char* file : kTokenizerFiles)
    if (name == file) return true;
  return name.rfind(kStagingPrefix, 0) == 0;
}

// An existing --out: empty, or with --force holding an earlier export's files only.
void check_existing_out(const fs::path& out, bool force) {
  if (!fs::is_directory(out)) {
    throw InputError(fmt::format("--out {} exists and is not a directory", out.string()));
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(out)) {
    if (!force) {
      throw InputError(fmt::format(
          "--out {} is not empty; choose a new directory or pass --force to replace the export "
          "in it",
          out.string()));
    }
    const std::string name = entry.path().filename().string();
    if (!written_by_an_export(name)) {
      throw InputError(fmt::format(
          "--out {} holds {}, which an export does not write: --force replaces only an earlier "
          "export; choose another directory",
          out.string(),
          name));
    }
  }
}

// Into an existing --out (a mount point, ".", a link to a folder: each stays where it is): staged
// in a folder inside it, then the earlier export's files removed and the new ones moved up. A
// failed export leaves --out as it was.
int64_t export_in_place(const HfExportOptions& o, const ModelSpec& model) {
  std::string staging = (fs::path(o.out_dir) / (std::string(kStagingPrefix) + "XXXXXX")).string();
  if (::mkdtemp(staging.data()) == nullptr) {
    throw EnvironmentError(
        fmt::format("cannot create a directory in {}: {}", o.out_dir, std::strerror(errno)));
  }
  struct RemoveStaging {
    std::string dir;
    ~RemoveStaging() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_staging{staging};
  HfExportOptions into = o;
  into.out_dir = staging;
  const int64_t files = export_hf(into, model);
  for (const fs::directory_entry& entry : fs::directory_iterator(o.out_dir)) {
    if (entry.path() != fs::path(staging)) fs::remove_all(entry.path());
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(staging)) {
    fs::rename(entry.path(), fs::path(o.out_dir) / entry.path().filename());
  }
  return files;
}

// A new --out: staged beside it and renamed into place whole.
int64_t export_new(const HfExportOptions& o, const ModelSpec& model) {
  StagedDirectory staged(o.out_dir, /*replace=*/false);
  HfExportOptions into = o;
  into.out_dir = staged.path();
  const int64_t files = export_hf(into, model);
  staged.commit();
  return files;
}

}  // namespace

void add_export_hf_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<HfExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export-hf",
      "Write a training checkpoint as a HuggingFace model directory (config.json, safetensors "
      "weights, tokenizer files) that transformers' from_pretrained loads");
  cmd->add_option(
         "--checkpoint", o->checkpoint_dir, "Checkpoint directory (OUT/checkpoints/step-N)")
      ->required()
      ->check(CLI::ExistingDirectory);
  auto force = std::make_shared<bool>(false);
  cmd->add_option("--out",
                  o->out_dir,
                  "Output directory: new or empty (written whole or not at all; --force replaces "
                  "a non-empty one)")
      ->required();
  cmd->add_flag("--force",
                *force,
                "Replace the earlier export in a non-empty --out (its files are removed once this "
                "one is whole; a folder holding other files is refused): the two never mix");
  cmd->add_option("--max-shard-size",
                  o->max_shard_bytes,
                  "Largest weight file in bytes; above it the weights are sharded with an index")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  cmd->callback([&global, o, force] {
    // The export's files land in --out: never inside the checkpoint it reads.
    if (o->out_dir.empty()) throw InputError("--out: the path is empty");  // a directory: "hf/" too
    if (inside_directory(o->out_dir, o->checkpoint_dir)) {
      throw InputError(fmt::format("--out {} is inside the checkpoint {}; write it elsewhere",
                                   o->out_dir,
                                   o->checkpoint_dir));
    }
    if (inside_directory(o->checkpoint_dir, o->out_dir)) {  // --force would remove it
      throw InputError(fmt::format("--out {} holds the checkpoint {}; write the export elsewhere",
                                   o->out_dir,
                                   o->checkpoint_dir));
    }
    std::string name;
    const std::string file = checkpoint_model_file(o->checkpoint_dir, name);
    const ModelSpec model =
        file.empty() ? Catalog::load({global.config_dir}).model(name) : load_model_file(file);
    // Staged and moved into place: a failed export leaves --out as it was, and a replaced one
    // keeps no file of the earlier export.
    std::error_code ec;
    const bool exists = fs::exists(o->out_dir, ec);
    if (exists) check_existing_out(o->out_dir, *force);
    const int64_t files = exists ? export_in_place(*o, model) : export_new(*o, model);
    std::cout << fmt::format(
        "{} in {} ({} weight file{})\n", model.name, o->out_dir, files, files == 1 ? "" : "s");
  });
}

}  // namespace gpudays
