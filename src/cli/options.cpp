// The options several commands share (--model/--model-file, --gpus-per-node/--nodes, --format),
// declared in commands.h; each command adds its own in cmd_NAME.cpp.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "config/search_space.h"

namespace gpudays {

void add_model_options(CLI::App& cmd, std::string& model, std::string& model_file) {
  cmd.add_option("--model", model, "Catalog model name (see `gpudays models`)");
  cmd.add_option("--model-file", model_file, "A model TOML file (schema: docs/catalog.md)")
      ->check(CLI::ExistingFile);
}

void add_cluster_options(CLI::App& cmd,
                         int64_t& gpus_per_node,
                         int64_t& nodes,
                         const std::string& gpus_per_node_help) {
  cmd.add_option("--gpus-per-node", gpus_per_node, gpus_per_node_help)
      ->check(CLI::Range(int64_t{1}, kMaxGpusPerNode))
      ->capture_default_str();
  cmd.add_option("--nodes", nodes, "Nodes (ranks = nodes x gpus-per-node)")
      ->check(CLI::Range(int64_t{1}, kMaxNodes))
      ->capture_default_str();
}

CLI::Option* add_format_option(CLI::App& cmd,
                               std::string& format,
                               const std::vector<std::string>& choices) {
  return cmd.add_option("--format", format, "Output format")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

}  // namespace gpudays
