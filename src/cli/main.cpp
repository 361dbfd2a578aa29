// gpudays command line: parses the request, runs one subcommand, turns every error into a
// one-line message (exit 2 for bad input, 1 for anything else). No stack traces.
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/build_info.h"
#include "common/error.h"

namespace gpudays {

CLI::Option* add_format_option(CLI::App& cmd, std::string& format,
                               const std::vector<std::string>& choices) {
  return cmd.add_option("--format", format, "Output format")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

}  // namespace gpudays

int main(int argc, char** argv) {
  using namespace gpudays;
  CLI::App app{
      "gpudays: can you pre-train model M on N GPUs of type G, with which settings, in how many "
      "days, at what cost?"};
  app.set_version_flag("--version", fmt::format("gpudays {} ({})", kVersion, kGitCommit));
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--config-dir", global.config_dir,
                 "Catalog directory with models/ and gpus/ (default: $GPUDAYS_CONFIG_DIR, else the "
                 "source tree's configs/)");
  add_catalog_commands(app, global);
  add_plan_command(app, global);
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpudays: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "gpudays: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpudays: internal error: " << e.what() << "\n";
    return 1;
  }
}
