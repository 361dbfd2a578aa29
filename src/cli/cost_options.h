// Command-line options shared by `gpudays cost` and `gpudays report`: which GPUs and counts, the
// price overrides, the energy and amortisation assumptions. Turns them into the cost component's
// CostOptions; only the command line sees them as a whole.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "catalog/catalog.h"
#include "cost/cost_analysis.h"
#include "cost/time_source.h"
#include "plan/planner.h"
#include "search_space/search_space.h"

namespace gpudays {

// The most GPUs a --counts (or fit --gpus) value may have: the planner's kMaxNodes nodes of its
// largest node, kMaxGpusPerNode (search_space.h). The cost config's largest base machine lowers it
// (machine_layout refuses more nodes than the planner takes): 32,768 GPUs with the shipped 8-GPU
// machines.
inline constexpr int64_t kMaxCountGpus = kMaxNodes * kMaxGpusPerNode;

// The help's sentence on that limit.
std::string gpu_count_limit_help();

struct CostRequest {
  std::vector<std::string> gpus = {"rtx-3090", "a6000", "a100", "h100"};
  std::vector<int64_t> counts = {1, 2, 4, 8};
  std::vector<std::string> purchase_prices;  // --price NAME=USD
  std::vector<std::string> cloud_prices;     // --cloud-price NAME=USD_PER_GPU_HOUR
  std::string price_file;                    // --prices FILE
  std::string cost_config;                   // --cost-config FILE (default configs/cost/cost.toml)
  double usd_per_kwh = -1.0;                 // < 0: the cost config's value
  double grid_gco2_per_kwh = -1.0;
  double power_fraction_of_tdp = -1.0;
  double power_limit_fraction = -1.0;  // --power-limit-fraction; < 0: none (the TDP)
  double amortisation_years = -1.0;
  double host_memory_gib = 0.0;  // per node; 0: the planner's default
  LinkSettings links;            // --pair-bridge, --peer-to-peer; unset: each GPU file's
  // --cluster FILE: a Slurm cluster's price_per_gpu_hour as each partition GPU's rental price (the
  // allocation's charge; --prices and --cloud-price win over it), docs/slurm.md.
  std::string cluster_file;
};

void add_cost_request_options(CLI::App& cmd, CostRequest& request);

// --power-limit-fraction (plan, cost, report, fit) into `fraction`, which stays below 0 when not
// given; `energy` says that the energy's draw is capped too (the commands that cost energy).
CLI::Option* add_power_limit_fraction_option(CLI::App& cmd, double& fraction, bool energy = true);

// Catalog GPUs for --gpus (names or aliases; duplicates removed). Throws InputError.
std::vector<const GpuSpec*> resolve_gpus(const Catalog& catalog,
                                         const std::vector<std::string>& names);

// The GPUs under --power-limit-fraction: copies, kept in `storage`, whose power limit is that
// fraction of their TDP; without it (< 0) the catalog's GPUs as they are.
std::vector<const GpuSpec*> power_limited(const std::vector<const GpuSpec*>& gpus,
                                          double fraction,
                                          std::deque<GpuSpec>& storage);

// Every GPU x count, GPU-major, counts ascending; counts checked against the machine layouts.
std::vector<HardwareOption> hardware_options(const std::vector<const GpuSpec*>& gpus,
                                             std::vector<int64_t> counts,
                                             const CostAssumptions& assumptions);

// --source: where the training times come from. Throws InputError naming the flag and choices.
TimeSourceKind parse_source_flag(const std::string& source);

// The planner's options for the training times: the catalog's calibration, --host-memory-gib and
// the links (--pair-bridge only changes the cards that take a bridge).
PlanOptions cost_plan_options(const CostRequest& request, const Catalog& catalog);

// Cost config + overrides from the command line, price file and flags (flags win).
CostOptions build_cost_options(const CostRequest& request, const Catalog& catalog);

}  // namespace gpudays
