// The cost model's assumptions (base machine prices by GPUs per node, amortisation period,
// electricity price, grid carbon intensity, power draw), each with its source, read from
// configs/cost/cost.toml. GPU prices stay in the GPU catalog (see prices.h for overrides).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gpudays {

// The physically sensible range of each assumption, shared by configs/cost/cost.toml (or
// --cost-config) and the flags that override it, so that neither can produce an absurd cost:
// - a base machine (host without GPUs) costs at most $10M: the shipped ones cost $1,000-$10,500,
//   a whole 8-GPU DGX about $500K;
// - hardware is written off over at least 0.01 years (about 4 days; a shorter period makes the
//   amortised share of a run a multiple of the purchase) and at most 100 years;
// - electricity costs at most $100/kWh (retail prices are about $0.05-$0.60);
// - a grid emits at most 5,000 gCO2/kWh (coal, the dirtiest source, about 1,000);
// - a GPU draws on average more than 0 and at most its TDP (fraction (0, 1]).
inline constexpr double kMaxBaseMachineUsd = 1.0e7;
inline constexpr double kMinAmortisationYears = 0.01;
inline constexpr double kMaxAmortisationYears = 100.0;
inline constexpr double kMaxUsdPerKwh = 100.0;
inline constexpr double kMaxGridGco2PerKwh = 5000.0;
inline constexpr double kMaxPowerFractionOfTdp = 1.0;

struct BaseMachinePrice {
  int64_t gpus_per_node = 0;
  double usd = 0.0;
};

struct EnergyOptions {
  double usd_per_kwh = 0.13;
  double grid_gco2_per_kwh = 436.0;
  double power_fraction_of_tdp = 0.8;  // average draw while training, as a fraction of TDP
  // The GPUs' power limit as a fraction of their TDP (nvidia-smi -pl), 1 for none: the draw is
  // at most the limit, and the planner runs compute at the cube root of it (GpuSpec).
  double power_limit_fraction = 1.0;
  double draw_fraction_of_tdp() const {
    return std::min(power_fraction_of_tdp, power_limit_fraction);
  }
};

// "GPUs capped at 0.7 of their TDP: compute at 0.888 of its rate"; empty without a cap.
std::string describe_power_cap(const EnergyOptions& energy);

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
