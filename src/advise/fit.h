// `gpudays fit`: the inverse questions. Which catalog models can be pre-trained with their original
// recipes on given hardware within D days or B dollars; the largest compute-optimal model of a
// family that fits in memory and finishes within them; and the cheapest hardware (GPU type x
// count) that trains a model within D days. Torch-free; planner times, cost-model prices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "advise/compute_optimal.h"
#include "cost/cost_analysis.h"
#include "plan/planner.h"

namespace gpudays {

class Catalog;

// The three questions `fit` answers, one row kind for all.
enum class FitAnswer { kCatalogModel, kComputeOptimal, kHardware };
std::string to_string(FitAnswer answer);  // "catalog", "compute_optimal", "hardware"

struct FitRow {
  FitAnswer answer = FitAnswer::kCatalogModel;
  std::string model;
  int64_t params = 0;
  double tokens = 0.0;  // the recipe's: steps x global batch x tokens per sample
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ffn = 0;
  std::optional<double> chinchilla_loss;     // compute-optimal rows: Hoffmann et al. Eq. 10
  CostRow cost;                              // hardware, planner time, purchase, amortised, cloud
  std::optional<double> cost_usd;            // on the cost options' basis
  std::optional<double> peak_memory_bytes;   // per GPU, the planner's best configuration
  std::optional<double> least_memory_bytes;  // what it needs at the least (MemoryBreakdown)
  std::optional<double> most_memory_bytes;   // the top of its peak's range (MemoryBreakdown)
  bool within_days = true;                   // true when no --days was given
  bool within_budget = true;                 // true when no --budget was given
  bool ok() const { return cost.time.fits && within_days && within_budget; }
  std::string reason;  // why not, when !ok()
};

struct FitOptions {
  // Prices, assumptions, the cost basis and the limits: max_days (--days) and budget_usd
  // (--budget, on the basis).
  CostOptions cost;
  PlanOptions plan;
  ComputeOptimalOptions scaling;
};

// One row per catalog model on `hardware`, in catalog order.
std::vector<FitRow> fit_catalog_models(const Catalog& catalog,
                                       const HardwareOption& hardware,
                                       const FitOptions& options);

// The largest rung of the compute-optimal ladder of `family_template` that fits in memory and
// meets the limits on `hardware` (planner time and memory; larger rungs need more of both).
// nullopt when not even the smallest rung does. Throws InputError without a limit.
std::optional<FitRow> largest_compute_optimal(const ModelSpec& family_template,
                                              const HardwareOption& hardware,
                                              const FitOptions& options);

// Every option of `hardware` (GPU type x count) that trains `model` within the limits, cheapest
// on the basis first (ties: fewer days). Throws InputError without a limit.
std::vector<FitRow> cheapest_hardware(const ModelSpec& model,
                                      const std::vector<HardwareOption>& hardware,
                                      const FitOptions& options);

// The row of `model` on one hardware option: the planner's best configuration, its costs and
// whether they meet the limits. Shared by the three answers (and by tests).
FitRow evaluate_fit(const ModelSpec& model,
                    const HardwareOption& hardware,
                    const FitOptions& options,
                    FitAnswer answer);

}  // namespace gpudays
