// `gpudays trial`: the command line of one trial process (trial/trial_runner.h does the trial).
// `--spec FILE` runs the trial a sweep wrote and prints its JSON result line (rank 0);
// `--check-device NAME` says whether this build can run trials there; `--probe-device NAME`
// measures the device (trial/device_probe.h) and prints one JSON line.
#include <fstream>
#include <iostream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/input_files.h"
#include "common/json_errors.h"
#include "common/json_text.h"
#include "engine/device.h"
#include "sweep/trial_spec.h"
#include "trial/device_probe.h"
#include "trial/trial_runner.h"

namespace gpudays {
namespace {

TrialSpec read_trial_spec(const std::string& path) {
  check_input_file(path, std::uintmax_t{16} << 20, "trial specifications");
  std::ifstream in(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{} {}", path, json_problem(e)));
  }
  return trial_spec_from_json(j);
}

void run_trial_command(const GlobalOptions& global, const std::string& spec_path) {
  const TrialSpec spec = read_trial_spec(spec_path);
  const TrialRank rank = join_trial(spec.device);  // a build without CUDA says so here
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = spec.model_file.empty() ? catalog.model(spec.model)
                                                  : catalog.resolve_model("", spec.model_file);
  const TrialMeasurement measured = run_trial(spec, model, *rank.comm, rank.device);
  if (rank.comm->rank() == 0) std::cout << json_text(to_json(measured)) << "\n";
}

}  // namespace

void add_trial_command(CLI::App& app, const GlobalOptions& global) {
  auto spec_path = std::make_shared<std::string>();
  auto check_device = std::make_shared<std::string>();
  auto probe_device_name = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "trial", "Run one benchmark trial from a specification file (used by `gpudays bench`)");
  CLI::Option* spec =
      cmd->add_option("--spec", *spec_path, "Trial specification (JSON)")->check(CLI::ExistingFile);
  CLI::Option* check =
      cmd->add_option("--check-device",
                      *check_device,
                      "Only check that trials can run on this device (cpu, cuda, cuda:N) and print "
                      "its name")
          ->excludes(spec);
  CLI::Option* probe =
      cmd->add_option("--probe-device",
                      *probe_device_name,
                      "Measure this device (cpu, cuda, cuda:N) for a few seconds: fp32 and bf16 "
                      "matmul TFLOP/s, memory bandwidth and size; prints one JSON line")
          ->excludes(spec)
          ->excludes(check);
  cmd->callback([&global, spec_path, check_device, probe_device_name, check, probe] {
    for (const auto& [option, value] :
         {std::pair{check, check_device}, {probe, probe_device_name}}) {
      if (option->count() > 0 && value->empty()) {
        throw InputError(option->get_name() + ": the device name is empty (cpu, cuda or cuda:N)");
      }
    }
    if (!check_device->empty()) {
      std::cout << device_name(parse_device(*check_device)) << "\n";
    } else if (!probe_device_name->empty()) {
      std::cout << json_text(to_json(probe_device(parse_device(*probe_device_name)))) << "\n";
    } else if (spec_path->empty()) {
      throw InputError("trial needs --spec FILE (or --check-device NAME, or --probe-device NAME)");
    } else {
      run_trial_command(global, *spec_path);
    }
  });
}

}  // namespace gpudays
