// The planner's options from a request.
#include "accuracy/planner_options.h"

#include "accuracy/error_bands.h"
#include "catalog/calibration_file.h"
#include "catalog/catalog.h"
#include "plan/fitted_constants.h"

namespace gpudays {

PlannerOptions planner_options(const Catalog& catalog,
                               DeviceKind device,
                               const PlannerRequest& request) {
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
