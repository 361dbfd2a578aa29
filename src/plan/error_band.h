// Error bars on predicted times, from the planner's residuals on published measurements. On a
// published case the planner's throughput was off by e = predicted / published - 1, so the
// published time was the predicted time x (1 + e). A predicted time t on a GPU type becomes the
// range t x (1 + min(0, e10)) .. t x (1 + max(0, e90)), with e10 and e90 the 10th and 90th
// percentiles of that GPU type's residuals when it has at least kMinBandCases trusted cases, else
// of every case. The range always contains the estimate itself: when every residual of a GPU type
// lies on one side (the planner biased there), the percentile on the other side is replaced by 0.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gpudays {

constexpr int kMinBandCases = 3;
constexpr double kBandLowQuantile = 0.1;
constexpr double kBandHighQuantile = 0.9;

struct TimeRange {
  double low = 0.0;
  double high = 0.0;
  bool operator==(const TimeRange&) const = default;
};

struct ErrorBand {
  std::string basis;  // "23 published a100-80gb-sxm cases", "34 published cases, all GPUs"
  int cases = 0;
  double low_error = 0.0;   // min(0, 10th percentile of the residuals): never above 0
  double high_error = 0.0;  // max(0, 90th percentile): never below 0
  bool widened = false;     // a percentile lay on the estimate's wrong side and was replaced by 0
  TimeRange range(double predicted) const {
    return {predicted * (1.0 + low_error), predicted * (1.0 + high_error)};
  }
  bool operator==(const ErrorBand&) const = default;
};

class ErrorBands {
 public:
  ErrorBands(std::map<std::string, ErrorBand> by_gpu, ErrorBand all)
      : by_gpu_(std::move(by_gpu)), all_(std::move(all)) {}
  // The GPU type's own band when it has one, else the band of every case.
  const ErrorBand& for_gpu(const std::string& gpu) const;
  const std::map<std::string, ErrorBand>& by_gpu() const { return by_gpu_; }
  const ErrorBand& all() const { return all_; }

 private:
  std::map<std::string, ErrorBand> by_gpu_;  // GPU types with at least kMinBandCases cases
  ErrorBand all_;
};

// Linear interpolation between order statistics (numpy's default); `values` must not be empty.
double quantile(std::vector<double> values, double q);

// The band of a set of residuals, `basis` saying what they are.
ErrorBand error_band_of(std::string basis, const std::vector<double>& errors);

}  // namespace gpudays
