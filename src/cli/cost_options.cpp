// Shared cost options: CLI11 wiring and the conversion to CostOptions.
#include "cli/cost_options.h"
#include "cli/commands.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "accuracy/planner_options.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "common/units.h"
#include "cost/hardware_cost.h"
#include "search_space/search_space.h"
#include "slurm/cluster_file.h"

namespace gpudays {
namespace {

// The flags default to -1 (not given); CLI11 has already checked the ranges of given values.
void apply_if_given(double flag_value, double& into) {
  if (flag_value >= 0) into = flag_value;
}

// The cluster's partitions with a GPU and a price: catalog GPU -> its allocation's USD per
// GPU-hour. Partitions of one GPU (by any of its names) that charge alike are one price; charging
// differently (a short and a long queue), the cost is ambiguous unless --cloud-price chooses.
PriceOverrides cluster_prices(const std::string& path,
                              const Catalog& catalog,
                              const PriceOverrides& flags) {
  PriceOverrides out;
  if (path.empty()) return out;
  std::map<std::string, std::string> partition_of;  // catalog GPU -> the partition priced first
  for (const SlurmPartition& p : load_slurm_cluster(path).partitions) {
    if (p.gpu.empty() || p.price_per_gpu_hour <= 0) continue;
    const std::string gpu = catalog.gpu(p.gpu).name;
    const auto known = out.cloud_usd_per_gpu_hour.find(gpu);
    if (known == out.cloud_usd_per_gpu_hour.end()) {
      add_price_assignment(fmt::format("{}={}", gpu, p.price_per_gpu_hour),
                           "--cluster " + path,
                           out.cloud_usd_per_gpu_hour,
                           PriceKind::kCloud);
      partition_of[gpu] = p.name;
      continue;
    }
    const bool chosen = flags.cloud_usd_per_gpu_hour.contains(gpu);
    if (known->second.value != p.price_per_gpu_hour && !chosen) {
      throw InputError(fmt::format(
          "--cluster {}: partitions '{}' and '{}' charge {} {:g} and {:g} USD per GPU-hour; "
          "choose one with --cloud-price {}=USD",
          path,
          partition_of[gpu],
          p.name,
          gpu,
          known->second.value,
          p.price_per_gpu_hour,
          gpu));
    }
  }
  return out;
}

// --price and --cloud-price: one value per GPU.
PriceOverrides flag_prices(const CostRequest& r) {
  PriceOverrides flags;
  for (const std::string& p : r.purchase_prices) {
    add_price_assignment(p, "--price", flags.purchase_usd, PriceKind::kPurchase);
  }
  for (const std::string& p : r.cloud_prices) {
    add_price_assignment(p, "--cloud-price", flags.cloud_usd_per_gpu_hour, PriceKind::kCloud);
  }
  return flags;
}

// A --price or --cloud-price for a GPU that is not costed would do nothing (a typo of --gpus, most
// often): InputError naming the flag.
void refuse_prices_not_costed(const PriceOverrides& flags,
                              const std::vector<const GpuSpec*>& gpus) {
  for (const auto* prices : {&flags.purchase_usd, &flags.cloud_usd_per_gpu_hour}) {
    for (const auto& entry : *prices) {
      const std::string& name = entry.first;
      const bool costed =
          std::any_of(gpus.begin(), gpus.end(), [&](const GpuSpec* g) { return g->name == name; });
      if (!costed) {
        throw InputError(
            fmt::format("{}: {} is not among the GPUs costed (--gpus)", entry.second.origin, name));
      }
    }
  }
}

}  // namespace

std::string gpu_count_limit_help() {
  constexpr int64_t kShippedLargestMachine = 8;  // configs/cost/cost.toml [base_machine]
  return fmt::format(
      "at most {} nodes of the cost config's largest machine ({} GPUs with the shipped 8-GPU "
      "machines)",
      kMaxNodes,
      kMaxNodes * kShippedLargestMachine);
}

CLI::Option* add_power_limit_fraction_option(CLI::App& cmd, double& fraction, bool energy) {
  return cmd
      .add_option("--power-limit-fraction",
                  fraction,
                  std::string("The GPUs' power limit as a fraction of their TDP (nvidia-smi "
                              "-pl): planned compute at the cube root of it") +
                      (energy ? ", the energy's draw at most it (default: 1, the TDP; planned "
                                "times only)"
                              : " (default: 1, the TDP)"))
      ->check(number_check(GpuSpec::kLowestPowerLimitFraction, 1.0, /*low_open=*/false));
}

void add_cost_request_options(CLI::App& cmd, CostRequest& r) {
  cmd.add_option(
         "--gpus", r.gpus, "GPU types, comma-separated names or aliases (see `gpudays gpus`)")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--counts",
                 r.counts,
                 "GPU counts, comma-separated: 1, 2, 4, 8 (one machine) or multiples of 8 (nodes "
                 "of 8); " +
                     gpu_count_limit_help())
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, kMaxCountGpus))
      ->capture_default_str();
  cmd.add_option(
      "--price",
      r.purchase_prices,
      fmt::format("Override a purchase price per GPU, NAME=USD in [0, {:g}] (repeatable, "
                  "once per GPU), e.g. a100=17000",
                  kMaxGpuPurchaseUsd));
  cmd.add_option("--cloud-price",
                 r.cloud_prices,
                 fmt::format("Override a cloud rental price, NAME=USD_PER_GPU_HOUR in (0, {:g}] "
                             "(repeatable, once per GPU)",
                             kMaxCloudUsdPerGpuHour));
  cmd.add_option("--prices",
                 r.price_file,
                 "TOML price file: [purchase_usd] and [cloud_usd_per_gpu_hour] tables of NAME = "
                 "number (--price and --cloud-price win over it)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--cost-config",
                 r.cost_config,
                 "Cost assumptions file (default: configs/cost/cost.toml: base machine prices, "
                 "amortisation, energy, each with its source)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--usd-per-kwh",
                 r.usd_per_kwh,
                 "Electricity price, USD (default: the cost config's; 0.13 as shipped)")
      ->check(number_check(0.0, kMaxUsdPerKwh, /*low_open=*/false));
  cmd.add_option("--grid-gco2-per-kwh",
                 r.grid_gco2_per_kwh,
                 "Grid carbon intensity (default: the cost config's; 436, the 2022 world average, "
                 "as shipped)")
      ->check(number_check(0.0, kMaxGridGco2PerKwh, /*low_open=*/false));
  cmd.add_option("--power-fraction",
                 r.power_fraction_of_tdp,
                 "Average GPU power draw while training, as a fraction of TDP (default: the cost "
                 "config's; 0.8 as shipped; at most 1, the TDP)")
      ->check(number_check(0.0, kMaxPowerFractionOfTdp, /*low_open=*/true));
  add_power_limit_fraction_option(cmd, r.power_limit_fraction);
  cmd.add_option(
         "--amortisation-years",
         r.amortisation_years,
         "Years the hardware is written off over (default: the cost config's; 5 as shipped)")
      ->check(number_check(kMinAmortisationYears, kMaxAmortisationYears, /*low_open=*/false));
  cmd.add_option("--host-memory-gib",
                 r.host_memory_gib,
                 "Host memory per node for offloaded optimizer state, GiB (default: twice the "
                 "node's GPU memory, at least 64 GiB)")
      ->check(number_check(0.0, 1.0e6, /*low_open=*/true));
  cmd.add_option("--cluster",
                 r.cluster_file,
                 "Slurm cluster file (docs/slurm.md): its partitions' price_per_gpu_hour price "
                 "the allocation (as the rental cost); --prices and --cloud-price win over it")
      ->check(CLI::ExistingFile);
  add_link_options(cmd, r.links);
}

TimeSourceKind parse_source_flag(const std::string& source) {
  if (const std::optional<TimeSourceKind> kind = parse_time_source(source)) return *kind;
  throw InputError(
      fmt::format("unknown --source '{}'; valid: {}", source, join_choices(time_source_names())));
}

PlanOptions cost_plan_options(const CostRequest& request, const Catalog& catalog) {
  PlannerRequest planner;
  planner.host_memory_bytes_per_node = request.host_memory_gib * kGiB;
  planner.links = request.links;
  planner.error_bands = true;
  return planner_options(catalog, DeviceKind::kGpu, planner).options;
}

std::vector<const GpuSpec*> resolve_gpus(const Catalog& catalog,
                                         const std::vector<std::string>& names) {
  if (names.empty()) throw InputError("--gpus needs at least one GPU");
  std::vector<const GpuSpec*> gpus;
  for (const std::string& name : names) {
    const GpuSpec* gpu = &catalog.gpu(name);
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
  }
  return gpus;
}

std::vector<const GpuSpec*> power_limited(const std::vector<const GpuSpec*>& gpus,
                                          double fraction,
                                          std::deque<GpuSpec>& storage) {
  if (fraction < 0.0) return gpus;
  std::vector<const GpuSpec*> out;
  for (const GpuSpec* gpu : gpus) {
    storage.push_back(*gpu);
    storage.back().limit_power_to_share(fraction);
    out.push_back(&storage.back());
  }
  return out;
}

std::vector<HardwareOption> hardware_options(const std::vector<const GpuSpec*>& gpus,
                                             std::vector<int64_t> counts,
                                             const CostAssumptions& assumptions) {
  if (counts.empty()) throw InputError("--counts needs at least one count");
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (int64_t n : counts) {
    if (n <= 0) throw InputError(fmt::format("--counts: {} is not a positive count", n));
    machine_layout(n, assumptions.base_machines);  // throws naming the valid counts
  }
  std::vector<HardwareOption> options;
  for (const GpuSpec* gpu : gpus) {
    for (int64_t n : counts) options.push_back({gpu, n});
  }
  return options;
}

CostOptions build_cost_options(const CostRequest& r, const Catalog& catalog) {
  CostOptions cost;
  cost.assumptions = load_cost_assumptions(
      r.cost_config.empty() ? cost_assumptions_path(catalog.config_dir()) : r.cost_config);
  EnergyOptions& energy = cost.assumptions.energy;
  apply_if_given(r.usd_per_kwh, energy.usd_per_kwh);
  apply_if_given(r.grid_gco2_per_kwh, energy.grid_gco2_per_kwh);
  apply_if_given(r.power_fraction_of_tdp, energy.power_fraction_of_tdp);
  apply_if_given(r.power_limit_fraction, energy.power_limit_fraction);
  apply_if_given(r.amortisation_years, cost.assumptions.amortisation.years);
  energy.usd_per_kwh += 0.0;  // -0 (from the file or a flag) is 0: no cost prints as "-0"
  energy.grid_gco2_per_kwh += 0.0;
  // Each source names a GPU once (an alias and its catalog name are one GPU); a later source wins
  // over an earlier one: the cluster, then --prices, then the flags.
  const PriceOverrides file =
      r.price_file.empty() ? PriceOverrides{} : load_price_file(r.price_file);
  const PriceOverrides flags = canonical_price_overrides(flag_prices(r), catalog);
  refuse_prices_not_costed(flags, resolve_gpus(catalog, r.gpus));
  cost.price_overrides =
      merge_price_overrides(merge_price_overrides(cluster_prices(r.cluster_file, catalog, flags),
                                                  canonical_price_overrides(file, catalog)),
                            flags);
  return cost;
}

}  // namespace gpudays
