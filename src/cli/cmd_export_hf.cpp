// `gpudays export-hf --checkpoint DIR --out DIR`: a training checkpoint as a HuggingFace directory
// (trainer/hf_handoff.h); the model is the one the checkpoint carries (its model file, or its
// catalog name).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/output_files.h"
#include "trainer/hf_handoff.h"

namespace gpudays {

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
                "Replace a non-empty --out (the old directory is removed once the new one is in "
                "place): an earlier export's files never mix with this one's");
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
    // Written into a staging directory beside --out and moved into place: a failed export
    // leaves --out as it was, and a replaced one keeps no file of the earlier export.
    StagedDirectory staged(o->out_dir, *force);
    HfExportOptions into = *o;
    into.out_dir = staged.path();
    const int64_t files = export_hf(into, model);
    staged.commit();
    std::cout << fmt::format(
        "{} in {} ({} weight file{})\n", model.name, o->out_dir, files, files == 1 ? "" : "s");
  });
}

}  // namespace gpudays
