// The inverse questions: what fits the hardware and the limits, and what hardware fits a model.
#include "advise/fit.h"

#include <algorithm>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "common/error.h"

namespace gpudays {
namespace {

void require_limit(const CostOptions& limits) {
  if (!limits.max_days && !limits.budget_usd)
    throw InputError("fit needs a limit: --days D, --budget USD or both");
}

double recipe_tokens(const ModelSpec& model) {
  return static_cast<double>(model.recipe.train_steps) *
         static_cast<double>(model.recipe.global_batch) *
         static_cast<double>(model.tokens_per_sample());
}

// Checks the row against the limits and says why it misses them.
void apply_limits(FitRow& row, const CostOptions& limits) {
  const CostBasis basis = limits.basis;
  const TrainingTime& t = row.cost.time;
  if (!t.fits) {
    row.within_days = false;
    row.within_budget = false;
    row.reason = t.reason;
    return;
  }
  if (limits.max_days && t.training_days > *limits.max_days) {
    row.within_days = false;
    row.reason =
        fmt::format("takes {:.1f} days, more than {:g}", t.training_days, *limits.max_days);
  }
  if (limits.budget_usd && (!row.cost_usd || *row.cost_usd > *limits.budget_usd)) {
    row.within_budget = false;
    const std::string why =
        row.cost_usd ? fmt::format("costs ${:.0f} ({}), more than ${:.0f}",
                                   *row.cost_usd,
                                   to_string(basis),
                                   *limits.budget_usd)
                     : fmt::format("no {} price known for {}", to_string(basis), row.cost.gpu);
    row.reason += (row.reason.empty() ? "" : "; ") + why;
  }
}

}  // namespace

std::string to_string(FitAnswer answer) {
  switch (answer) {
    case FitAnswer::kCatalogModel:
      return "catalog";
    case FitAnswer::kComputeOptimal:
      return "compute_optimal";
    case FitAnswer::kHardware:
      return "hardware";
  }
  return "?";
}

FitRow evaluate_fit(const ModelSpec& model,
                    const HardwareOption& hardware,
                    const FitOptions& options,
                    FitAnswer answer) {
  TimeSourceOptions source_options;
  source_options.plan = options.plan;
  const std::unique_ptr<TrainingTimeSource> source = make_time_source(source_options);
  const CostAnalysis analysis = analyse_costs(model, {hardware}, *source, options.cost);
  FitRow row;
  row.answer = answer;
  row.model = model.name;
  row.params = count_params(model).total;
  row.tokens = recipe_tokens(model);
  row.n_layers = model.arch.n_layers;
  row.d_model = model.arch.d_model;
  row.n_heads = model.arch.n_heads;
  row.d_ffn = model.arch.d_ffn;
  row.cost = analysis.rows.front();
  row.cost_usd = basis_cost_usd(row.cost, options.cost.basis);
  if (row.cost.time.fits) {
    const PlanResult result = plan(model, Cluster{row.cost.layout, hardware.gpu}, options.plan);
    if (result.best) {
      row.peak_memory_bytes = result.best->peak_memory_bytes();
      row.least_memory_bytes = result.best->memory.least_bytes();
      row.most_memory_bytes = result.best->memory.most_bytes();
    }
  }
  apply_limits(row, options.cost);
  return row;
}

std::vector<FitRow> fit_catalog_models(const Catalog& catalog,
                                       const HardwareOption& hardware,
                                       const FitOptions& options) {
  std::vector<FitRow> rows;
  for (const ModelSpec& model : catalog.models())
    rows.push_back(evaluate_fit(model, hardware, options, FitAnswer::kCatalogModel));
  return rows;
}

std::optional<FitRow> largest_compute_optimal(const ModelSpec& family_template,
                                              const HardwareOption& hardware,
                                              const FitOptions& options) {
  require_limit(options.cost);
  std::optional<FitRow> best;
  // Every larger rung has more parameters and, at a fixed number of tokens per parameter, more
  // tokens: more memory and quadratically more FLOPs. The first rung that misses ends the search.
  for (int64_t d_model : compute_optimal_ladder(options.scaling)) {
    const ComputeOptimalModel candidate =
        compute_optimal_model(family_template, d_model, options.scaling);
    FitRow row = evaluate_fit(candidate.model, hardware, options, FitAnswer::kComputeOptimal);
    if (!row.ok()) break;
    row.chinchilla_loss = chinchilla_loss(static_cast<double>(candidate.params), candidate.tokens);
    best = std::move(row);
  }
  return best;
}

std::vector<FitRow> cheapest_hardware(const ModelSpec& model,
                                      const std::vector<HardwareOption>& hardware,
                                      const FitOptions& options) {
  require_limit(options.cost);
  std::vector<FitRow> rows;
  for (const HardwareOption& option : hardware) {
    FitRow row = evaluate_fit(model, option, options, FitAnswer::kHardware);
    if (row.ok() && row.cost_usd) rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const FitRow& a, const FitRow& b) {
    if (*a.cost_usd != *b.cost_usd) return *a.cost_usd < *b.cost_usd;
    return a.cost.time.training_days < b.cost.time.training_days;
  });
  return rows;
}

}  // namespace gpudays
