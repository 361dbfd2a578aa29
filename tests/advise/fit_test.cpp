// `fit`'s answers agree with the planner and the cost model for what they return: the catalog
// rows, the largest compute-optimal model (and the next rung up misses), the cheapest hardware.
#include <gtest/gtest.h>

#include "advise/fit.h"
#include "advise/model_file.h"
#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "cost/cost_assumptions.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

FitOptions fit_options(std::optional<double> days, std::optional<double> budget_usd = {}) {
  FitOptions options;
  options.cost.assumptions = load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  options.cost.max_days = days;
  options.cost.budget_usd = budget_usd;
  return options;
}

HardwareOption four_a100() {
  return {&catalog().gpu("a100"), 4};
}

double planned_days(const ModelSpec& model, const HardwareOption& hardware) {
  const int64_t per_node = std::min<int64_t>(hardware.gpu_count, 8);
  const PlanResult result =
      plan(model, Cluster{{hardware.gpu_count / per_node, per_node}, hardware.gpu}, PlanOptions{});
  if (!result.best) throw std::runtime_error(model.name + " does not fit");
  return result.best->training_days;
}

TEST(ComputeOptimal, ModelHasTwentyTokensPerParameter) {
  const ComputeOptimalModel m = compute_optimal_model(catalog().model("pythia-1b"), 2048);
  EXPECT_EQ(m.model.arch.n_layers, 16);
  EXPECT_EQ(m.model.arch.n_heads, 16);
  EXPECT_EQ(m.model.arch.d_ffn, 8192);
  EXPECT_EQ(m.params, count_params(m.model).total);
  const double tokens_per_step = 1024.0 * 2048;
  EXPECT_GE(m.tokens, 20.0 * m.params);
  EXPECT_LT(m.tokens, 20.0 * m.params + tokens_per_step);
  EXPECT_THROW(compute_optimal_model(catalog().model("vit"), 2048), InputError);
  EXPECT_THROW(compute_optimal_model(catalog().model("pythia-1b"), 100), InputError);
}

// Hoffmann et al. 2022: Chinchilla (70B parameters, 1.4T tokens) by Eq. 10 with Approach 3's
// constants: 1.69 + 406.4 / 70e9^0.34 + 410.7 / 1.4e12^0.28 = 1.69 + 0.0836 + 0.1630 = 1.937.
TEST(ComputeOptimal, ChinchillaLossOfChinchilla) {
  EXPECT_NEAR(chinchilla_loss(70e9, 1.4e12), 1.937, 0.002);
}

TEST(Fit, CatalogRowsAgreeWithPlan) {
  const std::vector<FitRow> rows = fit_catalog_models(catalog(), four_a100(), fit_options(30.0));
  ASSERT_EQ(rows.size(), catalog().models().size());
  for (const FitRow& row : rows) {
    if (row.model != "pythia-160m" && row.model != "pythia-1b") continue;
    ASSERT_TRUE(row.cost.time.fits) << row.model;
    EXPECT_DOUBLE_EQ(row.cost.time.training_days,
                     planned_days(catalog().model(row.model), four_a100()));
    EXPECT_EQ(row.within_days, row.cost.time.training_days <= 30.0) << row.model;
  }
  const auto twelve_b = std::find_if(
      rows.begin(), rows.end(), [](const FitRow& r) { return r.model == "pythia-12b"; });
  ASSERT_NE(twelve_b, rows.end());
  EXPECT_FALSE(twelve_b->ok());
  EXPECT_FALSE(twelve_b->reason.empty());
}

TEST(Fit, LargestComputeOptimalAgreesWithPlanAndIsMaximal) {
  const FitOptions options = fit_options(30.0);
  const std::optional<FitRow> largest =
      largest_compute_optimal(catalog().model("pythia-1b"), four_a100(), options);
  ASSERT_TRUE(largest.has_value());
  ASSERT_TRUE(largest->ok());
  const ModelSpec& family = catalog().model("pythia-1b");
  const ComputeOptimalModel chosen = compute_optimal_model(family, largest->d_model);
  EXPECT_EQ(chosen.params, largest->params);
  const double days = planned_days(chosen.model, four_a100());
  EXPECT_DOUBLE_EQ(largest->cost.time.training_days, days);
  EXPECT_LE(days, 30.0);
  ASSERT_TRUE(largest->peak_memory_bytes.has_value());
  EXPECT_LE(*largest->peak_memory_bytes, static_cast<double>(four_a100().gpu->memory_bytes));
  // The next rung up misses the limit (or memory).
  const ComputeOptimalModel next = compute_optimal_model(family, largest->d_model + 128);
  EXPECT_FALSE(evaluate_fit(next.model, four_a100(), options, FitAnswer::kComputeOptimal).ok());
}

TEST(Fit, BudgetLimitsTheLargestModel) {
  const HardwareOption hardware = four_a100();
  const FitOptions by_days = fit_options(30.0);
  FitOptions by_budget = fit_options(30.0, 500.0);
  by_budget.cost.basis = CostBasis::kAmortised;
  const auto days_only = largest_compute_optimal(catalog().model("pythia-1b"), hardware, by_days);
  const auto both = largest_compute_optimal(catalog().model("pythia-1b"), hardware, by_budget);
  ASSERT_TRUE(days_only && both);
  EXPECT_LE(both->params, days_only->params);
  EXPECT_LE(*both->cost_usd, 500.0);
}

TEST(Fit, CheapestHardwareIsSortedAndWithinTheLimit) {
  std::vector<HardwareOption> options;
  for (const char* gpu : {"rtx-3090", "a100", "h100"})
    for (int64_t count : {4, 8, 16}) options.push_back({&catalog().gpu(gpu), count});
  const FitOptions fit = fit_options(20.0);
  const std::vector<FitRow> rows = cheapest_hardware(catalog().model("pythia-1b"), options, fit);
  ASSERT_FALSE(rows.empty());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_LE(rows[i].cost.time.training_days, 20.0);
    if (i > 0) {
      EXPECT_LE(*rows[i - 1].cost_usd, *rows[i].cost_usd);
    }
  }
  // The cost model's own answer to the same question.
  TimeSourceOptions source_options;
  const auto source = make_time_source(source_options);
  const CostAnalysis analysis =
      analyse_costs(catalog().model("pythia-1b"), options, *source, fit.cost);
  ASSERT_TRUE(analysis.cheapest_within_max_days.has_value());
  const CostRow& cheapest = analysis.rows[*analysis.cheapest_within_max_days];
  EXPECT_EQ(rows.front().cost.gpu, cheapest.gpu);
  EXPECT_EQ(rows.front().cost.layout, cheapest.layout);
}

TEST(ComputeOptimal, ModelFileReadsBackAsTheSameModel) {
  for (const char* family : {"pythia-1b", "roberta"}) {
    const ModelSpec written = compute_optimal_model(catalog().model(family), 1536).model;
    const std::string path = test::write_temp_file(std::string(family) + "-optimal.toml",
                                                   transformer_model_toml(written, "test"));
    const ModelSpec read = load_model_file(path);
    EXPECT_EQ(read.name, written.name);
    EXPECT_EQ(read.family, written.family);
    EXPECT_EQ(count_params(read).total, count_params(written).total) << family;
    EXPECT_EQ(read.arch.max_position_embeddings, written.arch.max_position_embeddings);
    EXPECT_EQ(read.arch.rotary_pct, written.arch.rotary_pct);
    EXPECT_EQ(read.arch.layer_norm_eps, written.arch.layer_norm_eps);
    EXPECT_EQ(read.recipe.train_steps, written.recipe.train_steps);
    EXPECT_EQ(read.recipe.warmup_steps, written.recipe.warmup_steps);
    EXPECT_EQ(read.recipe.lr, written.recipe.lr);
    EXPECT_EQ(read.recipe.min_lr, written.recipe.min_lr);
    EXPECT_EQ(read.recipe.precision, written.recipe.precision);
    EXPECT_EQ(read.recipe.mlm_probability, written.recipe.mlm_probability);
    EXPECT_DOUBLE_EQ(planned_days(read, four_a100()), planned_days(written, four_a100()));
  }
  EXPECT_THROW(transformer_model_toml(catalog().model("mamba"), "test"), InputError);
}

TEST(Fit, WithoutALimitIsAnInputError) {
  EXPECT_THROW(largest_compute_optimal(catalog().model("pythia-1b"), four_a100(), fit_options({})),
               InputError);
  EXPECT_THROW(cheapest_hardware(catalog().model("pythia-1b"), {four_a100()}, fit_options({})),
               InputError);
}

}  // namespace
}  // namespace gpudays
