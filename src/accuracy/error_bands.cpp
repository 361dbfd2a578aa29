// The planner's error bands derived from its validation residuals (plan/error_band.h's types).
#include "accuracy/error_bands.h"

#include <filesystem>
#include <stdexcept>

#include "accuracy/validate.h"
#include "catalog/catalog.h"
#include "plan/planner.h"

namespace gpudays {

ErrorBands error_bands(const ValidationReport& report) {
  std::vector<BandResidual> residuals;
  for (const ValidationCase& v : report.cases) {
    if (!v.timed() || !v.trusted) continue;  // memory-only cases have no time error
    residuals.push_back({v.point, v.error, v.source_id});
  }
  if (residuals.empty()) throw std::logic_error("error bands of a validation without cases");
  return ErrorBands(std::move(residuals));
}

std::shared_ptr<const ErrorBands> validation_error_bands(const Catalog& catalog,
                                                         const PlanOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(catalog.config_dir() + "/measurements", ec)) return nullptr;
  PlanOptions plain = options;
  plain.error_bands.reset();
  ValidationOptions validation;
  validation.worst = 0;
  const ValidationReport report =
      validate(select_measurements(load_measurements(catalog), {}), catalog, plain, validation);
  if (report.overall.cases == 0) return nullptr;
  return std::make_shared<const ErrorBands>(error_bands(report));
}

}  // namespace gpudays
