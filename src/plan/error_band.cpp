// Error bands from validation residuals.
#include "plan/error_band.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "plan/planner.h"
#include "plan/validate.h"

namespace gpudays {
namespace {

ErrorBand band_of(std::string basis, const std::vector<double>& errors) {
  ErrorBand b;
  b.basis = std::move(basis);
  b.cases = static_cast<int>(errors.size());
  const double low = quantile(errors, kBandLowQuantile);
  const double high = quantile(errors, kBandHighQuantile);
  b.low_error = std::min(0.0, low);
  b.high_error = std::max(0.0, high);
  b.widened = low > 0.0 || high < 0.0;
  return b;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::logic_error("quantile of no values");
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

const ErrorBand& ErrorBands::for_gpu(const std::string& gpu) const {
  const auto it = by_gpu_.find(gpu);
  return it == by_gpu_.end() ? all_ : it->second;
}

ErrorBands error_bands(const ValidationReport& report) {
  std::map<std::string, std::vector<double>> by_gpu;
  std::vector<double> all;
  for (const ValidationCase& v : report.cases) {
    if (v.skipped || !v.trusted) continue;
    by_gpu[v.gpu].push_back(v.error);
    all.push_back(v.error);
  }
  if (all.empty()) throw std::logic_error("error bands of a validation without cases");
  std::map<std::string, ErrorBand> bands;
  for (const auto& [gpu, errors] : by_gpu) {
    if (static_cast<int>(errors.size()) < kMinBandCases) continue;
    bands.emplace(gpu, band_of(fmt::format("{} published {} cases", errors.size(), gpu), errors));
  }
  return ErrorBands(std::move(bands),
                    band_of(fmt::format("{} published cases, all GPUs", all.size()), all));
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
