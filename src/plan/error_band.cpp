// Error bands from validation residuals: the nearest residuals' percentiles, widened for distance.
#include "plan/error_band.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace gpudays {
namespace {

using Dimension = std::function<std::string(const BandPoint&)>;

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// The residuals of one group of a dimension, and how many sources they come from.
struct Group {
  std::vector<double> errors;
  std::set<std::string> sources;
  bool supported() const { return static_cast<int>(sources.size()) >= kMinBandSources; }
};

Group group_of(const std::vector<BandResidual>& residuals,
               const Dimension& key,
               const std::string& value) {
  Group g;
  for (const BandResidual& r : residuals) {
    if (key(r.point) != value) continue;
    g.errors.push_back(r.error);
    g.sources.insert(r.source);
  }
  return g;
}

// How biased a group of this dimension can be: the largest |mean error| of its groups with at
// least kMinBandSources sources, never below `floor`.
double spread(const std::vector<BandResidual>& residuals, const Dimension& key, double floor) {
  std::map<std::string, Group> groups;
  for (const BandResidual& r : residuals) {
    Group& g = groups[key(r.point)];
    g.errors.push_back(r.error);
    g.sources.insert(r.source);
  }
  double widest = floor;
  for (const auto& [value, g] : groups)
    if (g.supported()) widest = std::max(widest, std::abs(mean(g.errors)));
  return widest;
}

std::string few_sources(const Group& g, const std::string& what) {
  if (g.sources.empty()) return fmt::format("no published {} case", what);
  return fmt::format("{} published {} case{} from only {} source{}",
                     g.errors.size(),
                     what,
                     g.errors.size() == 1 ? "" : "s",
                     g.sources.size(),
                     g.sources.size() == 1 ? "" : "s");
}

std::string basis_of(const Group& g, const std::string& what) {
  return fmt::format("{} published {} cases ({} sources)", g.errors.size(), what, g.sources.size());
}

}  // namespace

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

std::string ErrorBand::far_summary() const {
  std::string out;
  for (const std::string& why : far) out += (out.empty() ? "" : "; ") + why;
  if (far.size() > 1)
    out += fmt::format("; together +/-{:.0f}% (in quadrature)", 100.0 * far_width);
  return out;
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

ErrorBands::ErrorBands(std::vector<BandResidual> residuals) : residuals_(std::move(residuals)) {
  if (residuals_.empty()) throw std::logic_error("error bands without residuals");
  std::vector<double> all;
  for (const BandResidual& r : residuals_) all.push_back(r.error);
  all_ = error_band_of(fmt::format("{} published cases, all GPUs", all.size()), all);
}

ErrorBand ErrorBands::for_point(const BandPoint& p) const {
  const Dimension gpu = [](const BandPoint& q) { return q.gpu; };
  const Dimension architecture = [](const BandPoint& q) { return q.architecture; };
  const Dimension family = [](const BandPoint& q) { return q.family; };
  const Group same_gpu = group_of(residuals_, gpu, p.gpu);
  const Group same_architecture = group_of(residuals_, architecture, p.architecture);
  ErrorBand band = all_;
  if (same_gpu.supported()) {
    band = error_band_of(basis_of(same_gpu, p.gpu), same_gpu.errors);
  } else if (same_architecture.supported()) {
    band = error_band_of(basis_of(same_architecture, p.architecture + " GPU"),
                         same_architecture.errors);
  }
  const double floor = 0.5 * (all_.high_error - all_.low_error);
  double widen_squared = 0.0;
  auto far = [&](const std::string& why, double width) {
    band.far.push_back(fmt::format("{} (+/-{:.0f}%)", why, 100.0 * width));
    widen_squared += width * width;
  };
  const Group same_family = group_of(residuals_, family, p.family);
  if (!same_family.supported())
    far(few_sources(same_family, p.family + " model"), spread(residuals_, family, floor));
  if (!same_architecture.supported())
    far(few_sources(same_architecture, p.architecture + " GPU"),
        spread(residuals_, architecture, floor));
  const Dimension stack = [](const BandPoint& q) { return q.stack; };
  const Group same_stack = group_of(residuals_, stack, p.stack);
  if (!p.stack.empty() && !same_stack.supported())
    far(few_sources(same_stack, p.stack + " model code"), spread(residuals_, stack, floor));
  int64_t most_gpus = 0;
  double fewest_params = 0.0;
  double most_params = 0.0;
  for (const BandResidual& r : residuals_) {
    most_gpus = std::max(most_gpus, r.point.gpus);
    if (r.point.params <= 0.0) continue;
    fewest_params = fewest_params == 0.0 ? r.point.params : std::min(fewest_params, r.point.params);
    most_params = std::max(most_params, r.point.params);
  }
  if (static_cast<double>(p.gpus) > kBandScaleFactor * static_cast<double>(most_gpus))
    far(fmt::format("{} GPUs, published cases use at most {}", p.gpus, most_gpus), floor);
  if (p.params > 0.0 && most_params > 0.0 &&
      (p.params > kBandScaleFactor * most_params || p.params * kBandScaleFactor < fewest_params)) {
    far(fmt::format("{:.3g}B parameters, published cases span {:.3g}B-{:.3g}B",
                    p.params / 1e9,
                    fewest_params / 1e9,
                    most_params / 1e9),
        floor);
  }
  const double widen = std::sqrt(widen_squared);
  band.far_width = widen;
  band.low_error = std::max(kBandLowestError, band.low_error - widen);
  band.high_error += widen;
  return band;
}

}  // namespace gpudays
