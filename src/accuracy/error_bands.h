// The planner's error bands from its residuals on the published measurements: a validation
// report's bands, and the bands of the catalog's whole validation set (plan/error_band.h holds the
// band types the planner carries).
#pragma once

#include <memory>

#include "plan/error_band.h"

namespace gpudays {

class Catalog;
struct PlanOptions;
struct ValidationReport;

// The bands of a validation report's trusted cases compared on time (memory-only ones left out).
ErrorBands error_bands(const ValidationReport& report);

// The bands of the catalog's whole validation set planned with `options` (their error bands
// ignored); empty when the catalog has no measurements.
std::shared_ptr<const ErrorBands> validation_error_bands(const Catalog& catalog,
                                                         const PlanOptions& options);

}  // namespace gpudays
