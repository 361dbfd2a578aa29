// What `gpudays results`, `best` and `export` select (a model, a GPU, a cluster shape, a
// database) and the helpers they share (cmd_results.cpp); export's own parts are cmd_export.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "results/trial_record.h"

namespace gpudays {

struct ResultsRequest {
  std::string model;
  std::string model_file;
  std::string gpu;
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  std::string db = "gpudays.db";
  std::string format = "table";
  std::string source = "bench";
  std::string out;
  std::string status;            // results: empty for any
  std::string rule = "gpudays";  // the measurement rule: gpudays, reference, or any (results)
  bool incomplete = false;       // results: the search space's configurations not yet measured
  std::string methods = "all";   // results --incomplete: the search space's preset
  // export: the backend (empty: the chosen row's), "auto" DeepSpeed values, pinned fields ("on" /
  // "off", a sharding name, a micro-batch; empty or 0: searched)
  std::string backend;
  bool auto_values = false;
  PinFlags pins;
  // export: --transformers (empty: the installed one's), --torch-compile ("on"/"off"; empty: on
  // where free-lunch was measured), --gradient-accumulation-steps (0: searched)
  std::string transformers;
  std::string torch_compile;
  int64_t grad_acc_steps = 0;
};

// The results key of --gpu: the host CPU's name, or a catalog GPU's; empty for any.
std::string gpu_key(const Catalog& catalog, const std::string& gpu);
// The model's name as stored: --model-file's, a catalog model's, or as typed.
std::string model_key(const Catalog& catalog, const ResultsRequest& r);
std::vector<TrialRecord> stored_trials(const Catalog& catalog, const ResultsRequest& r);
void add_selection_options(CLI::App* cmd, ResultsRequest& r);
// --rule gpudays|reference|any (results/trial_record.h: MeasurementRule).
void add_rule_option(CLI::App& cmd, std::string& rule);
// best and export name one model and one GPU.
void require_selection(const ResultsRequest& r);

void add_export_command(CLI::App& app, const GlobalOptions& global);

}  // namespace gpudays
