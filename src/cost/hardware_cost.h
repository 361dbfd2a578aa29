// The cost arithmetic of one hardware option: how the GPUs are split into machines, what buying
// them costs, the run's share of that cost over the amortisation period, cloud rental and energy.
// Pure functions of numbers; training days come from a TrainingTimeSource (time_source.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/cost_assumptions.h"
#include "search_space/cluster.h"

namespace gpudays {

// Counts up to the largest base machine must be a base machine size (1, 2, 4, 8); larger counts
// must be whole multiples of it (nodes of the largest machine), at most the planner's kMaxNodes
// nodes (search_space.h). Throws InputError otherwise.
ClusterShape machine_layout(int64_t gpu_count, const std::vector<BaseMachinePrice>& machines);

struct PurchaseCost {
  double gpus_usd = 0.0;
  double base_machines_usd = 0.0;
  double total_usd() const { return gpus_usd + base_machines_usd; }
};

// GPUs x price per GPU + one base machine per node.
PurchaseCost purchase_cost(double gpu_usd,
                           const ClusterShape& layout,
                           const std::vector<BaseMachinePrice>& machines);

// The run's share of the purchase: purchase x training days / (years x 365).
double amortised_cost_usd(double purchase_usd,
                          double training_days,
                          const AmortisationOptions& options);

// GPU-hours x $/GPU-hour; nullopt when no rental price is known.
std::optional<double> cloud_cost_usd(double gpu_hours, std::optional<double> usd_per_gpu_hour);

struct EnergyUse {
  double kwh = 0.0;
  double usd = 0.0;
  double co2_kg = 0.0;
};

// TDP x GPUs x hours x the draw's fraction of TDP (the average draw, at most the power limit); the
// GPUs only (no host, cooling or PUE).
EnergyUse energy_use(double tdp_w,
                     int64_t gpu_count,
                     double training_hours,
                     const EnergyOptions& options);

}  // namespace gpudays
