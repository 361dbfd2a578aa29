// The paper's statistics: t quantiles, mean and confidence interval, median, the memory-saving
// speed-ups and gain, whole-day rounding.
#include "report/paper_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpudays {
namespace {

// t(0.975, df) for df = 1..30 (any table of Student's t, e.g. NIST/SEMATECH e-Handbook of
// Statistical Methods, Sec. 1.3.6.7.2).
constexpr std::array<double, 30> kStudentT975 = {
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};

constexpr double kNormal975 = 1.959963984540054;  // the standard normal's 97.5% quantile

}  // namespace

double student_t_975(int64_t degrees_of_freedom) {
  if (degrees_of_freedom < 1) throw std::invalid_argument("student_t_975: df must be >= 1");
  if (degrees_of_freedom <= static_cast<int64_t>(kStudentT975.size())) {
    return kStudentT975[static_cast<size_t>(degrees_of_freedom - 1)];
  }
  // Cornish-Fisher expansion of t in powers of 1/df (Abramowitz and Stegun 26.7.5).
  const double z = kNormal975;
  const double v = static_cast<double>(degrees_of_freedom);
  const double g1 = (std::pow(z, 3) + z) / 4.0;
  const double g2 = (5 * std::pow(z, 5) + 16 * std::pow(z, 3) + 3 * z) / 96.0;
  const double g3 =
      (3 * std::pow(z, 7) + 19 * std::pow(z, 5) + 17 * std::pow(z, 3) - 15 * z) / 384.0;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v);
}

std::optional<MeanInterval> mean_ci95(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (values.size() == 1) return MeanInterval{mean, mean, mean, 1};
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double sd = std::sqrt(squares / (n - 1.0));
  const double half_width =
      student_t_975(static_cast<int64_t>(values.size()) - 1) * sd / std::sqrt(n);
  return MeanInterval{mean, mean - half_width, mean + half_width, values.size()};
}

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty sample");
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

std::optional<MemorySavingSpeedups> memory_saving_speedups(
    const std::vector<double>& memory_saving_days, std::optional<double> free_lunch_days) {
  if (memory_saving_days.empty()) return std::nullopt;
  const auto [fastest, slowest] =
      std::minmax_element(memory_saving_days.begin(), memory_saving_days.end());
  const double worst = *slowest;
  MemorySavingSpeedups out;
  out.optimal = worst / *fastest;
  out.median = worst / median(memory_saving_days);
  out.worst = 1.0;
  if (free_lunch_days) out.free_lunch = worst / *free_lunch_days;
  return out;
}

double memory_saving_gain(double free_lunch_days, double memory_saving_days) {
  return (free_lunch_days - memory_saving_days) / free_lunch_days;
}

double whole_days(double days) {
  return std::round(days);
}

}  // namespace gpudays
