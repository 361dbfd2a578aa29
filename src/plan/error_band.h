// Error bars on predicted times, from the planner's residuals on published measurements. On a
// published case the planner's throughput was off by e = predicted / published - 1, so the
// published time was the predicted time x (1 + e). A predicted time t becomes the range
// t x (1 + min(0, e10)) .. t x (1 + max(0, e90)), with e10 and e90 the 10th and 90th percentiles
// of the residuals nearest the plan: its GPU type's when they come from at least kMinBandSources
// sources, else its GPU generation's, else every case's. Sources, not cases, are what is counted:
// one publication's cases share a stack and a setup, and their errors move together (twelve cases
// of one paper say little more about the next stack than one does). The range always contains the
// estimate itself: when every residual lies on one side (the planner biased there), the percentile
// on the other side is replaced by 0.
//
// A plan far from the published cases gets a wider range, and says why: each way it is far (a
// model family, GPU generation or model code with fewer than kMinBandSources sources, more GPUs or
// a model size beyond any case's) has a width, that dimension's spread: the largest |mean error|
// of its well-published groups (a family nobody measured may be as biased as the most biased
// family somebody did), never less than the half-width of the band of every case. Both ends move
// out by the widths added in quadrature: the ways to be far are independent biases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudays {

constexpr int kMinBandSources = 3;
constexpr double kBandLowQuantile = 0.1;
constexpr double kBandHighQuantile = 0.9;
// Beyond this factor of the published cases' largest GPU count or parameter range, a plan is "far".
constexpr double kBandScaleFactor = 4.0;
// The fast end of a range never falls below this share of the estimate.
constexpr double kBandLowestError = -0.75;

struct TimeRange {
  double low = 0.0;
  double high = 0.0;
  bool operator==(const TimeRange&) const = default;
};

// Where a plan or a published case sits, as far as its error is concerned.
struct BandPoint {
  std::string gpu;           // catalog GPU name
  std::string architecture;  // the GPU's generation: "ampere", "hopper", ...
  std::string family;        // the model family
  int64_t gpus = 1;
  double params = 0.0;
  // Whose model code ran: the planner's ModelCode name ("huggingface", "engine", ...); empty:
  // not known, and not a way to be far.
  std::string stack;
  bool operator==(const BandPoint&) const = default;
};

// One trusted, evaluated validation case.
struct BandResidual {
  BandPoint point;
  double error = 0.0;
  std::string source;  // the publication it came from
};

struct ErrorBand {
  std::string
      basis;  // "23 published a100-80gb-sxm cases (5 sources)", "34 published cases, all GPUs"
  int cases = 0;
  double low_error = 0.0;   // min(0, 10th percentile of the residuals) - widening: never above 0
  double high_error = 0.0;  // max(0, 90th percentile) + widening: never below 0
  bool widened = false;     // a percentile lay on the estimate's wrong side and was replaced by 0
  // Why the range is wider than its basis alone ("no published mamba case"), each with its width.
  std::vector<std::string> far;
  // The widths of `far` added in quadrature: how much wider each side is (the fast side stops at
  // kBandLowestError).
  double far_width = 0.0;
  TimeRange range(double predicted) const {
    return {predicted * (1.0 + low_error), predicted * (1.0 + high_error)};
  }
  bool contains_error(double error) const { return low_error <= error && error <= high_error; }
  // `far` joined by "; ", and with two or more their combined width; empty when near.
  std::string far_summary() const;
  bool operator==(const ErrorBand&) const = default;
};

class ErrorBands {
 public:
  // Throws std::logic_error without residuals.
  explicit ErrorBands(std::vector<BandResidual> residuals);
  // The band of the residuals nearest `point`, widened for each way the point is far from them.
  ErrorBand for_point(const BandPoint& point) const;
  const ErrorBand& all() const { return all_; }
  const std::vector<BandResidual>& residuals() const { return residuals_; }

 private:
  std::vector<BandResidual> residuals_;
  ErrorBand all_;
};

// Linear interpolation between order statistics (numpy's default); `values` must not be empty.
double quantile(std::vector<double> values, double q);

// The band of a set of residuals, `basis` saying what they are.
ErrorBand error_band_of(std::string basis, const std::vector<double>& errors);

}  // namespace gpudays
