// Error bands from validation residuals.
#include "plan/error_band.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpudays {
ErrorBand error_band_of(std::string basis, const std::vector<double>& errors) {
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

}  // namespace gpudays
