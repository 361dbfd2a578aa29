// The statistics behind the reference paper's figures ("$100K or 100 Days", Khandelwal et al.
// 2024; its plotting scripts in apoorvkh/academic-pretraining, scripts/plotting/): a mean with its
// 95% confidence interval, the median, the memory-saving comparison relative to the slowest
// configuration, the gain of memory-saving over free-lunch, and whole-day rounding. Arithmetic
// only; the report (paper_figures.h) chooses the cells and draws them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gpudays {

// The mean of a sample and the 95% confidence interval of that mean.
struct MeanInterval {
  double mean = 0.0;
  double low = 0.0;
  double high = 0.0;
  size_t count = 0;
  bool operator==(const MeanInterval&) const = default;
};

// Student's t quantile t(0.975, df): a table for df <= 30, the Cornish-Fisher expansion beyond
// (within 1e-4 of the exact value). Throws std::invalid_argument for df < 1.
double student_t_975(int64_t degrees_of_freedom);

// mean +- t(0.975, n-1) x s / sqrt(n), s the sample standard deviation (n-1); a single value has
// the interval [mean, mean]. nullopt for an empty sample. (The paper's bars use Vega-Lite's
// `errorbar extent="ci"`, a bootstrap of the same interval; see docs/cost.md.)
std::optional<MeanInterval> mean_ci95(const std::vector<double>& values);

// The median as polars computes it: the mean of the two middle values of an even sample.
// Throws std::invalid_argument for an empty sample.
double median(std::vector<double> values);

// The paper's memory-saving comparison of one cell (scripts/plotting/mem_saving_methods.py):
// speed-ups relative to the slowest memory-saving configuration that fits, worst days / days of
// the optimal (fastest), the median and the worst (= 1) memory-saving configuration, and of the
// free-lunch-only configuration when it fits.
struct MemorySavingSpeedups {
  double optimal = 1.0;
  double median = 1.0;
  double worst = 1.0;
  std::optional<double> free_lunch;
  bool operator==(const MemorySavingSpeedups&) const = default;
};

// From the days of every memory-saving configuration that fits (checkpointing, sharding or
// offloading on) and the free-lunch-only days (nullopt: it does not fit). nullopt when no
// memory-saving configuration fits.
std::optional<MemorySavingSpeedups> memory_saving_speedups(
    const std::vector<double>& memory_saving_days, std::optional<double> free_lunch_days);

// The paper's heat-map value (scripts/plotting/optimal_memory_saving_speedups.py): the fraction
// of time the fastest memory-saving configuration saves over the free-lunch-only one,
// (free-lunch days - memory-saving days) / free-lunch days; negative when it is slower.
double memory_saving_gain(double free_lunch_days, double memory_saving_days);

// Days rounded to a whole day as the paper prints its tables (polars `round(0)`, halves away
// from zero): 0.4 -> 0, 2.5 -> 3.
double whole_days(double days);

}  // namespace gpudays
