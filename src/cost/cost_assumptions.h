// The cost model's assumptions (base machine prices by GPUs per node, amortisation period,
// electricity price, grid carbon intensity, power draw), each with its source, read from
// configs/cost/cost.toml. GPU prices stay in the GPU catalog (see prices.h for overrides).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudays {

struct BaseMachinePrice {
  int64_t gpus_per_node = 0;
  double usd = 0.0;
};

struct EnergyOptions {
  double usd_per_kwh = 0.13;
  double grid_gco2_per_kwh = 436.0;
  double power_fraction_of_tdp = 0.8;  // average draw while training, as a fraction of TDP
};

struct AmortisationOptions {
  double years = 5.0;
};

struct CostAssumptions {
  std::vector<BaseMachinePrice> base_machines;  // ascending gpus_per_node
  AmortisationOptions amortisation;
  EnergyOptions energy;
  std::string base_machine_source;
  std::string amortisation_source;
  std::string energy_price_source;
  std::string grid_source;
  std::string power_source;
  std::string source_path;
};

// configs/cost/cost.toml under a catalog directory (see resolve_config_dir).
std::string cost_assumptions_path(const std::string& config_dir);

// Parses and validates the file; throws InputError naming the file, table and key.
CostAssumptions load_cost_assumptions(const std::string& path);

}  // namespace gpudays
