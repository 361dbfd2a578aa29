// Cost model tests: the reference's cost arithmetic (2 x RTX 3090 = $4,100, 4 x H100 = $127,500),
// machine layouts, amortisation, rental, energy, the Pareto frontier and the max-days / budget
// queries on constructed cases, and the cost assumptions file.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "cost/cost_analysis.h"
#include "cost/cost_assumptions.h"
#include "cost/cost_format.h"
#include "cost/hardware_cost.h"
#include "cost/pareto.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

const CostAssumptions& shipped() {
  static const CostAssumptions kAssumptions =
      load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  return kAssumptions;
}

double machine_usd(const std::string& gpu, int64_t count) {
  const GpuPrice price = gpu_price(catalog().gpu(gpu), /*canonical_overrides=*/{});
  const ClusterShape layout = machine_layout(count, shipped().base_machines);
  return purchase_cost(price.purchase_usd, layout, shipped().base_machines).total_usd();
}

// Khandelwal et al. 2024, cost analysis: GPU prices and base machines by GPU count.
TEST(CostArithmetic, ReferenceMachinePrices) {
  EXPECT_DOUBLE_EQ(machine_usd("rtx-3090", 2), 4100.0);  // 2 x 1,300 + 1,500
  EXPECT_DOUBLE_EQ(machine_usd("h100", 4), 127500.0);    // 4 x 30,000 + 7,500
  EXPECT_DOUBLE_EQ(machine_usd("a6000", 1), 5800.0);     // 4,800 + 1,000
  EXPECT_DOUBLE_EQ(machine_usd("a100", 8), 162500.0);    // 8 x 19,000 + 10,500
}

TEST(CostArithmetic, MultiNodeBuysOneBaseMachinePerNode) {
  const ClusterShape layout = machine_layout(16, shipped().base_machines);
  EXPECT_EQ(layout.num_nodes, 2);
  EXPECT_EQ(layout.gpus_per_node, 8);
  const PurchaseCost c = purchase_cost(30000.0, layout, shipped().base_machines);
  EXPECT_DOUBLE_EQ(c.gpus_usd, 480000.0);
  EXPECT_DOUBLE_EQ(c.base_machines_usd, 21000.0);
}

TEST(CostArithmetic, CountsWithoutAMachineAreInputErrors) {
  EXPECT_THROW(machine_layout(3, shipped().base_machines), InputError);
  EXPECT_THROW(machine_layout(12, shipped().base_machines), InputError);
  EXPECT_THROW(machine_layout(0, shipped().base_machines), InputError);
}

// The planner takes at most 4096 nodes: with 8-GPU machines, 32,768 GPUs, and no more.
TEST(CostArithmetic, CountsBeyondThePlannersNodesAreInputErrors) {
  EXPECT_EQ(machine_layout(32768, shipped().base_machines).num_nodes, 4096);
  try {
    machine_layout(32776, shipped().base_machines);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 4096 nodes (32768 GPUs)"), std::string::npos)
        << e.what();
  }
}

TEST(CostArithmetic, AmortisedCostIsTheRunsShareOfFiveYears) {
  const AmortisationOptions five_years;
  EXPECT_DOUBLE_EQ(amortised_cost_usd(127500.0, 365.0, five_years), 25500.0);
  EXPECT_DOUBLE_EQ(amortised_cost_usd(127500.0, 5 * 365.0, five_years), 127500.0);
  EXPECT_NEAR(amortised_cost_usd(4100.0, 30.0, five_years), 4100.0 * 30.0 / 1825.0, 1e-9);
}

TEST(CostArithmetic, CloudCostIsAbsentWithoutAPrice) {
  EXPECT_FALSE(cloud_cost_usd(100.0, std::nullopt).has_value());
  EXPECT_DOUBLE_EQ(*cloud_cost_usd(100.0, 2.99), 299.0);
  EXPECT_FALSE(gpu_price(catalog().gpu("rtx-3090"), {}).cloud_usd_per_gpu_hour.has_value());
}

TEST(CostArithmetic, EnergyIsTdpTimesGpusTimesHoursTimesUtilisation) {
  const EnergyOptions options{/*usd_per_kwh=*/0.13,
                              /*grid_gco2_per_kwh=*/436.0,
                              /*power_fraction_of_tdp=*/0.8};
  const EnergyUse e =
      energy_use(/*tdp_w=*/400.0, /*gpu_count=*/4, /*training_hours=*/24.0, options);
  EXPECT_NEAR(e.kwh, 30.72, 1e-9);
  EXPECT_NEAR(e.usd, 30.72 * 0.13, 1e-9);
  EXPECT_NEAR(e.co2_kg, 30.72 * 0.436, 1e-9);
  // Capped at 0.6 of the TDP, the draw is at most the cap; a cap above the usual draw changes
  // nothing.
  EnergyOptions capped = options;
  capped.power_limit_fraction = 0.6;
  EXPECT_NEAR(energy_use(400.0, 4, 24.0, capped).kwh, 30.72 * 0.6 / 0.8, 1e-9);
  capped.power_limit_fraction = 0.9;
  EXPECT_NEAR(energy_use(400.0, 4, 24.0, capped).kwh, 30.72, 1e-9);
}

TEST(CostAssumptions, ShippedFileHasTheReferenceValuesAndSources) {
  const CostAssumptions& a = shipped();
  ASSERT_EQ(a.base_machines.size(), 4u);
  const double expected[] = {1000.0, 1500.0, 7500.0, 10500.0};
  const int64_t counts[] = {1, 2, 4, 8};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.base_machines[i].gpus_per_node, counts[i]);
    EXPECT_DOUBLE_EQ(a.base_machines[i].usd, expected[i]);
  }
  EXPECT_DOUBLE_EQ(a.amortisation.years, 5.0);
  for (const std::string* s : {&a.base_machine_source,
                               &a.amortisation_source,
                               &a.energy_price_source,
                               &a.grid_source,
                               &a.power_source}) {
    EXPECT_FALSE(s->empty());
  }
}

TEST(CostAssumptions, UnknownKeysAndMissingSourcesAreRejected) {
  const std::string good =
      "[base_machine]\ngpus_per_node = [1, 2]\nusd = [10, 20]\ndate = \"x\"\nsource = \"s\"\n"
      "[amortisation]\nyears = 3.0\nsource = \"s\"\n"
      "[energy]\nusd_per_kwh = 0.1\nsource = \"s\"\ngrid_gco2_per_kwh = 100.0\n"
      "grid_source = \"s\"\npower_fraction_of_tdp = 0.5\npower_source = \"s\"\n";
  EXPECT_DOUBLE_EQ(
      load_cost_assumptions(test::write_temp_file("cost_ok.toml", good)).amortisation.years, 3.0);
  EXPECT_THROW(load_cost_assumptions(test::write_temp_file("cost_typo.toml", good + "typo = 1\n")),
               InputError);
  std::string no_source = good;
  no_source.erase(no_source.find("source = \"s\"\n[amortisation]"), 13);
  EXPECT_THROW(load_cost_assumptions(test::write_temp_file("cost_nosrc.toml", no_source)),
               InputError);
  EXPECT_THROW(load_cost_assumptions("/nonexistent/cost.toml"), InputError);
}

// The cost config is held to the bounds of the flags that override it (cost_assumptions.h): each
// absurd value is refused, naming the file's key (the key at fault, not its neighbour).
TEST(CostAssumptions, ValuesOutsideTheFlagsBoundsAreRejectedNamingTheKey) {
  const std::string good =
      "[base_machine]\ngpus_per_node = [1, 2]\nusd = [10, 20]\ndate = \"x\"\nsource = \"s\"\n"
      "[amortisation]\nyears = 3.0\nsource = \"s\"\n"
      "[energy]\nusd_per_kwh = 0.1\nsource = \"s\"\ngrid_gco2_per_kwh = 100.0\n"
      "grid_source = \"s\"\npower_fraction_of_tdp = 0.5\npower_source = \"s\"\n";
  const std::pair<const char*, const char*> cases[][2] = {
      {{"usd_per_kwh = 0.1", "usd_per_kwh = 1e308"}, {"usd_per_kwh", "is not in [0, 100]"}},
      {{"grid_gco2_per_kwh = 100.0", "grid_gco2_per_kwh = 1e308"},
       {"grid_gco2_per_kwh", "is not in [0, 5000]"}},
      {{"years = 3.0", "years = 1e-300"}, {"years", "is not in [0.01, 100]"}},
      {{"years = 3.0", "years = 0.0"}, {"years", "is not in [0.01, 100]"}},
      {{"power_fraction_of_tdp = 0.5", "power_fraction_of_tdp = 1.5"},
       {"power_fraction_of_tdp", "is not in (0, 1]"}},
      {{"usd = [10, 20]", "usd = [10, 9223372036854775807]"}, {"usd", "is not in [0, 1e+07]"}},
      {{"usd = [10, 20]", "usd = [-1000, 20]"}, {"usd", "is not in [0, 1e+07]"}},
      {{"gpus_per_node = [1, 2]", "gpus_per_node = [1, 128]"},
       {"gpus_per_node", "is not a GPU count in [1, 64]"}},
  };
  for (const auto& [edit, expected] : cases) {
    std::string text = good;
    text.replace(text.find(edit.first), std::string(edit.first).size(), edit.second);
    const std::string path = test::write_temp_file("cost_bounds.toml", text);
    try {
      load_cost_assumptions(path);
      ADD_FAILURE() << edit.second << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string(expected.first) + ": "), std::string::npos) << what;
      EXPECT_NE(what.find(expected.second), std::string::npos) << what;
    }
  }
}

// Constructed points: A and F identical, B faster and dearer, C and D dominated by A, E
// infeasible (never on the frontier, never an answer, even though it looks best).
std::vector<TradeoffPoint> constructed_points() {
  return {{true, 10.0, 100.0},   // A
          {true, 5.0, 200.0},    // B
          {true, 10.0, 150.0},   // C: as slow as A, dearer
          {true, 20.0, 100.0},   // D: as cheap as A, slower
          {false, 1.0, 1.0},     // E: cannot run
          {true, 10.0, 100.0}};  // F: same as A
}

// An amount that rounds to zero prints as zero, never "-0" (a price given as -0, an energy price
// of -0, a tiny negative from arithmetic); other amounts keep their sign and rounding.
TEST(CostFormat, NeverNegativeZero) {
  EXPECT_EQ(format_usd(-0.0), "$0.00");
  EXPECT_EQ(format_usd(-0.004), "$0.00");
  EXPECT_EQ(format_dollars(-0.0), "0.00");
  EXPECT_EQ(format_usd(0.42), "$0.42");
  EXPECT_EQ(format_usd(-0.42), "$-0.42");
  EXPECT_EQ(format_usd(127500.4), "$127,500");
  EXPECT_EQ(format_kwh(-0.0), "0 kWh");
  EXPECT_EQ(format_kwh(-0.4), "0 kWh");
  EXPECT_EQ(format_co2_kg(-0.0), "0 kg");
  EXPECT_EQ(format_co2_kg(52.0), "52 kg");
}

// An amount that would print as an overflowed integer ("-0", 9,223,...), "inf" or hundreds of
// digits is an error, never a printed value.
TEST(CostFormat, NonFiniteOrHugeAmountsAreErrorsNotNumbers) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {inf, -inf, std::nan(""), 1e20, -1e20, 9.3e18, 1e308}) {
    EXPECT_THROW(format_usd(bad), InputError) << bad;
    EXPECT_THROW(format_dollars(bad), InputError) << bad;
    EXPECT_THROW(format_kwh(bad), InputError) << bad;
    EXPECT_THROW(format_co2_kg(bad), InputError) << bad;
  }
  EXPECT_THROW(format_usd_or_na(inf), InputError);
  EXPECT_EQ(format_usd(1e15), "$1,000,000,000,000,000");
  EXPECT_EQ(format_usd_or_na(std::nullopt), "n/a");
}

TEST(Pareto, FrontierOfConstructedPoints) {
  const std::vector<bool> f = pareto_frontier(constructed_points());
  EXPECT_EQ(f, (std::vector<bool>{true, true, false, false, false, true}));
}

TEST(Pareto, StrictTradeoffChainIsAllFrontier) {
  const std::vector<TradeoffPoint> chain = {{true, 1, 8}, {true, 2, 4}, {true, 4, 2}, {true, 8, 1}};
  for (bool on : pareto_frontier(chain)) EXPECT_TRUE(on);
  EXPECT_TRUE(pareto_frontier({}).empty());
}

TEST(Pareto, MaxDaysGivesTheCheapestThatFinishesInTime) {
  const auto points = constructed_points();
  EXPECT_EQ(cheapest_within_days(points, 10.0), 0u);  // A ($100), not C, not E
  EXPECT_EQ(cheapest_within_days(points, 30.0), 0u);  // A and D cost the same; A is faster
  EXPECT_EQ(cheapest_within_days(points, 5.0), 1u);   // only B
  EXPECT_FALSE(cheapest_within_days(points, 4.0).has_value());
}

TEST(Pareto, BudgetGivesTheFastestWithinBudget) {
  const auto points = constructed_points();
  EXPECT_EQ(fastest_within_budget(points, 250.0), 1u);  // B
  EXPECT_EQ(fastest_within_budget(points, 150.0), 0u);  // A and C tie on days; A is cheaper
  EXPECT_FALSE(fastest_within_budget(points, 50.0).has_value());
}

}  // namespace
}  // namespace gpudays
