// `gpudays models` and `gpudays gpus`: the catalog as model rows and GPU rows
// (rows/catalog_rows.h), in every format.
#include <iostream>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "rows/catalog_rows.h"
#include "rows/row_format.h"

namespace gpudays {

void add_catalog_commands(CLI::App& app, const GlobalOptions& global) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* models = app.add_subcommand("models", "List the catalog's models and their recipes");
  add_format_option(*models, *format, row_format_names());
  models->callback([&global, format] {
    const Catalog catalog = Catalog::load({global.config_dir});
    write_rows(std::cout,
               make_row_set("model_row", model_columns(), catalog.models()),
               parse_row_format(*format));
  });
  auto gpu_format = std::make_shared<std::string>("table");
  CLI::App* gpus = app.add_subcommand("gpus", "List the catalog's GPUs (figures and sources)");
  add_format_option(*gpus, *gpu_format, row_format_names());
  gpus->callback([&global, gpu_format] {
    const Catalog catalog = Catalog::load({global.config_dir});
    write_rows(std::cout,
               make_row_set("gpu_row", gpu_columns(), catalog.gpus()),
               parse_row_format(*gpu_format));
  });
}

}  // namespace gpudays
