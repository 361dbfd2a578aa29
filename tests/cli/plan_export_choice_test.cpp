// `export --source plan` chooses what `plan` chooses: both plan through accuracy/planner_options.h
// (the fitted constants, the planner's row order), so the run file written is the plan's best row.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

// The method-set and batch keys of the plan's best row, as strings.
std::map<std::string, std::string> plan_choice(const std::string& args) {
  const test::CommandResult r = run_gpudays("plan --format json --no-calibration " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json best = nlohmann::json::parse(r.out).at("best");
  std::map<std::string, std::string> choice;
  for (const char* key : {"free_lunch", "activation_checkpointing", "offloading"}) {
    choice[key] = best.at(key).get<bool>() ? "true" : "false";
  }
  choice["sharding"] = best.at("sharding").get<std::string>();
  choice["micro_batch_size"] = std::to_string(best.at("micro_batch_size").get<int64_t>());
  choice["grad_acc_steps"] = std::to_string(best.at("grad_acc_steps").get<int64_t>());
  return choice;
}

// The same keys from the run file `export --source plan --format toml` writes.
std::map<std::string, std::string> export_choice(const std::string& args) {
  const test::CommandResult r = run_gpudays("export --source plan --format toml " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> values;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find(" = ");
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    std::string value = line.substr(eq + 3);
    if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
    values[line.substr(0, eq)] = value;
  }
  std::map<std::string, std::string> choice;
  for (const auto& [key, unused] : plan_choice(args)) choice[key] = values[key];
  return choice;
}

TEST(PlanExportChoice, ExportFromThePlanWritesThePlansBestRow) {
  for (const std::string args :
       {"--model pythia-1b --gpu a100 --gpus-per-node 4",
        "--model pythia-2.8b --gpu rtx-3090 --gpus-per-node 8",
        "--model roberta --gpu a6000 --gpus-per-node 2",
        "--model vit --gpu h100 --gpus-per-node 1",
        "--model pythia-1b --gpu a100 --gpus-per-node 4 --sharding zero_2 --checkpointing on",
        "--model pythia-6.9b --gpu a100 --gpus-per-node 8 --nodes 2"}) {
    const std::map<std::string, std::string> planned = plan_choice(args);
    EXPECT_EQ(export_choice(args), planned) << args;
    EXPECT_FALSE(planned.at("micro_batch_size").empty()) << args;
  }
}

}  // namespace
}  // namespace gpudays
