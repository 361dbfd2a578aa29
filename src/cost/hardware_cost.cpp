// Cost arithmetic: machine layout, purchase, amortisation, rental and energy.
#include "cost/hardware_cost.h"

#include <fmt/format.h>

#include "common/error.h"
#include "search_space/search_space.h"

namespace gpudays {
namespace {

inline constexpr double kDaysPerYear = 365.0;
inline constexpr double kWattsPerKilowatt = 1000.0;
inline constexpr double kGramsPerKilogram = 1000.0;

std::vector<std::string> machine_sizes(const std::vector<BaseMachinePrice>& machines) {
  std::vector<std::string> sizes;
  for (const BaseMachinePrice& m : machines) sizes.push_back(std::to_string(m.gpus_per_node));
  sizes.push_back(fmt::format("a multiple of {}", machines.back().gpus_per_node));
  return sizes;
}

double base_machine_usd(int64_t gpus_per_node, const std::vector<BaseMachinePrice>& machines) {
  for (const BaseMachinePrice& m : machines) {
    if (m.gpus_per_node == gpus_per_node) return m.usd;
  }
  throw InputError(fmt::format("no base machine price for {} GPUs per node", gpus_per_node));
}

}  // namespace

ClusterShape machine_layout(int64_t gpu_count, const std::vector<BaseMachinePrice>& machines) {
  if (machines.empty()) throw InputError("no base machine prices configured");
  const int64_t largest = machines.back().gpus_per_node;
  if (gpu_count > largest && gpu_count % largest == 0) {
    if (gpu_count / largest > kMaxNodes) {
      throw InputError(
          fmt::format("{} GPUs need {} nodes of {}; the planner takes at most {} "
                      "nodes ({} GPUs)",
                      gpu_count,
                      gpu_count / largest,
                      largest,
                      kMaxNodes,
                      kMaxNodes * largest));
    }
    return {gpu_count / largest, largest};
  }
  for (const BaseMachinePrice& m : machines) {
    if (m.gpus_per_node == gpu_count) return {1, gpu_count};
  }
  throw InputError(fmt::format("no machine holds {} GPUs; valid counts: {}",
                               gpu_count,
                               join_choices(machine_sizes(machines))));
}

PurchaseCost purchase_cost(double gpu_usd,
                           const ClusterShape& layout,
                           const std::vector<BaseMachinePrice>& machines) {
  PurchaseCost c;
  c.gpus_usd = gpu_usd * static_cast<double>(layout.world_size());
  c.base_machines_usd =
      base_machine_usd(layout.gpus_per_node, machines) * static_cast<double>(layout.num_nodes);
  return c;
}

double amortised_cost_usd(double purchase_usd,
                          double training_days,
                          const AmortisationOptions& options) {
  return purchase_usd * training_days / (options.years * kDaysPerYear);
}

std::optional<double> cloud_cost_usd(double gpu_hours, std::optional<double> usd_per_gpu_hour) {
  if (!usd_per_gpu_hour) return std::nullopt;
  return gpu_hours * *usd_per_gpu_hour;
}

EnergyUse energy_use(double tdp_w,
                     int64_t gpu_count,
                     double training_hours,
                     const EnergyOptions& options) {
  EnergyUse e;
  e.kwh = tdp_w * options.draw_fraction_of_tdp() * static_cast<double>(gpu_count) * training_hours /
          kWattsPerKilowatt;
  e.usd = e.kwh * options.usd_per_kwh;
  e.co2_kg = e.kwh * options.grid_gco2_per_kwh / kGramsPerKilogram;
  return e;
}

}  // namespace gpudays
