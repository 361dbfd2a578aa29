// The planner's options as every command plans with them, assembled once. On a GPU: the fitted
// constants of configs/calibration.toml and, when asked, the error bands of the validation set.
// On the host CPU: the planner's own constants and no band (both come from GPU measurements).
// Then the request's search space, pins, host memory, network and links. `plan`, `export --source
// plan`, `cost`, `bench` and `train --slurm` all plan through it, so they choose alike.
#pragma once

#include <optional>
#include <string>

#include "plan/planner.h"

namespace gpudays {

class Catalog;

struct PlannerRequest {
  MethodPreset preset = MethodPreset::kAll;
  ConfigurationPin pin;
  double host_memory_bytes_per_node = 0.0;    // 0: the planner's default
  std::optional<double> inter_node_gb_per_s;  // unset: the planner's default
  std::optional<double> cpu_adam_params_per_s;
  InputOptions input;  // the host's loader for image families
  LinkSettings links;  // unset: each GPU file's (bridged pairs, peer-to-peer)
  // The range of each time from the validation residuals: plans every published case once.
  bool error_bands = false;
};

struct PlannerOptions {
  PlanOptions options;
  std::string fitted_constants_path;  // the calibration file used; empty: the planner's own
};

PlannerOptions planner_options(const Catalog& catalog,
                               DeviceKind device,
                               const PlannerRequest& request);

}  // namespace gpudays
