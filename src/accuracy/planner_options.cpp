// The planner's options from a request.
#include "accuracy/planner_options.h"

#include <fmt/format.h>

#include "accuracy/error_bands.h"
#include "catalog/calibration_file.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "plan/fitted_constants.h"

namespace gpudays {

namespace {

// The network and the CPU optimizer within the planner's bounds, whoever asked (a flag, a cluster
// file): a figure near 0 made step times infinite or hundreds of digits long.
void check_request_figures(const PlannerRequest& request) {
  if (request.inter_node_gb_per_s) {
    const std::string problem = inter_node_problem(*request.inter_node_gb_per_s);
    if (!problem.empty()) throw InputError("inter-node network: " + problem);
  }
  if (const auto rate = request.cpu_adam_params_per_s;
      rate && !(*rate >= kMinCpuAdamParamsPerS && *rate <= kMaxCpuAdamParamsPerS)) {
    throw InputError(fmt::format("CPU optimizer: {} parameters/s is not in [{:g}, {:g}]",
                                 *rate,
                                 kMinCpuAdamParamsPerS,
                                 kMaxCpuAdamParamsPerS));
  }
}

}  // namespace

PlannerOptions planner_options(const Catalog& catalog,
                               DeviceKind device,
                               const PlannerRequest& request) {
  check_request_figures(request);
  const bool host_cpu = device == DeviceKind::kCpu;
  PlannerOptions out;
  if (!host_cpu) {
    const CalibrationFile fitted = load_calibration(catalog);
    out.options = calibrated_plan_options(fitted);
    out.fitted_constants_path = fitted.path;
  }
  PlanOptions& options = out.options;
  options.preset = request.preset;
  options.pin = request.pin;
  if (request.host_memory_bytes_per_node > 0) {
    options.host_memory_bytes_per_node = request.host_memory_bytes_per_node;
  }
  // The bands plan the published cases, each with its own network, links and CPU figures.
  if (!host_cpu && request.error_bands) {
    options.error_bands = validation_error_bands(catalog, options);
  }
  if (request.inter_node_gb_per_s) options.time.inter_node_gb_per_s = *request.inter_node_gb_per_s;
  options.input = request.input;
  if (request.cpu_adam_params_per_s) {
    options.time.cpu_adam_params_per_s = *request.cpu_adam_params_per_s;
  }
  options.time.links = request.links;
  return out;
}

}  // namespace gpudays
