// Cost analysis tests: rows for every option (infeasible ones kept, with the reason), the frontier
// and the queries over a constructed time source and over the planner; price overrides; the
// bench time source's error without a results database.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "cost/cost_analysis.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// Training days fixed per (GPU, count); a missing entry cannot run.
class FixedTimeSource final : public TrainingTimeSource {
 public:
  explicit FixedTimeSource(std::map<std::pair<std::string, int64_t>, double> days)
      : days_(std::move(days)) {}
  std::string name() const override { return "fixed"; }
  TrainingTime training_time(const ModelSpec&,
                             const GpuSpec& gpu,
                             const ClusterShape& layout) const override {
    TrainingTime t;
    const auto it = days_.find({gpu.name, layout.world_size()});
    if (it == days_.end()) {
      t.reason = "does not fit";
      return t;
    }
    t.fits = true;
    t.training_days = it->second;
    t.gpu_days = it->second * static_cast<double>(layout.world_size());
    return t;
  }

 private:
  std::map<std::pair<std::string, int64_t>, double> days_;
};

CostOptions shipped_cost_options() {
  CostOptions cost;
  cost.assumptions = load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  return cost;
}

std::vector<HardwareOption> options_for(const std::vector<std::string>& gpus,
                                        const std::vector<int64_t>& counts) {
  std::vector<HardwareOption> out;
  for (const auto& g : gpus) {
    for (int64_t n : counts) out.push_back({&catalog().gpu(g), n});
  }
  return out;
}

TEST(CostAnalysis, ConstructedOptionsFrontierAndQueries) {
  // 3090 x1 $2,300 (100 d), x2 $4,100 (60 d), x4 cannot run; H100 x1 $31,000 (10 d),
  // x2 $61,500 (5 d), x4 $127,500 (8 d: slower than x2 and dearer -> off the frontier).
  const FixedTimeSource source({{{"rtx-3090", 1}, 100.0},
                                {{"rtx-3090", 2}, 60.0},
                                {{"h100-sxm", 1}, 10.0},
                                {{"h100-sxm", 2}, 5.0},
                                {{"h100-sxm", 4}, 8.0}});
  CostOptions cost = shipped_cost_options();
  cost.max_days = 20.0;
  cost.budget_usd = 50000.0;
  const CostAnalysis a = analyse_costs(
      catalog().model("pythia-160m"), options_for({"rtx-3090", "h100"}, {1, 2, 4}), source, cost);
  ASSERT_EQ(a.rows.size(), 6u);
  EXPECT_FALSE(a.rows[2].time.fits);
  EXPECT_EQ(a.rows[2].time.reason, "does not fit");
  EXPECT_DOUBLE_EQ(a.rows[2].purchase.total_usd(), 12700.0);  // still priced
  EXPECT_FALSE(a.rows[2].amortised_usd.has_value());
  const std::vector<bool> expected = {true, true, false, true, true, false};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(a.rows[i].on_frontier, expected[i]) << i;
  EXPECT_EQ(a.cheapest_within_max_days, 3u);  // H100 x1: $31,000 in 10 days
  EXPECT_EQ(a.fastest_within_budget, 3u);     // H100 x1 is the fastest under $50,000
  EXPECT_DOUBLE_EQ(*a.rows[1].amortised_usd, 4100.0 * 60.0 / 1825.0);
  EXPECT_FALSE(a.rows[1].cloud_usd.has_value());  // no RTX 3090 rental price in the catalog
  EXPECT_DOUBLE_EQ(*a.rows[3].cloud_usd, 10.0 * 24.0 * 2.99);
}

TEST(CostAnalysis, CostBasisChangesTheFrontier) {
  const FixedTimeSource source({{{"rtx-3090", 1}, 100.0}, {{"h100-sxm", 1}, 10.0}});
  CostOptions cost = shipped_cost_options();
  cost.basis = CostBasis::kCloud;
  const CostAnalysis a = analyse_costs(
      catalog().model("pythia-160m"), options_for({"rtx-3090", "h100"}, {1}), source, cost);
  EXPECT_FALSE(a.rows[0].on_frontier);  // no rental price: not a cloud option
  EXPECT_TRUE(a.rows[1].on_frontier);
  EXPECT_EQ(parse_cost_basis("amortised"), CostBasis::kAmortised);
  EXPECT_THROW(parse_cost_basis("lease"), InputError);
}

TEST(CostAnalysis, PlannerSourceKeepsOptionsThatCannotRun) {
  const auto source = make_time_source({});
  const CostAnalysis a = analyse_costs(catalog().model("pythia-1b"),
                                       options_for({"v100", "a100"}, {1, 4}),
                                       *source,
                                       shipped_cost_options());
  ASSERT_EQ(a.rows.size(), 4u);
  EXPECT_FALSE(a.rows[0].time.fits);  // pythia-1b trains in bf16; V100 has none
  EXPECT_NE(a.rows[0].time.reason.find("bf16"), std::string::npos);
  EXPECT_TRUE(a.rows[3].time.fits);
  EXPECT_GT(a.rows[3].time.training_days, 0.0);
  EXPECT_NE(a.rows[3].time.provenance.find("planner"), std::string::npos);
  EXPECT_FALSE(a.rows[3].time.settings.empty());
}

TEST(TimeSource, BenchNeedsAResultsDatabase) {
  TimeSourceOptions options;
  options.kind = *parse_time_source("bench");
  options.results_path = "/nonexistent/gpudays.db";
  options.catalog = &test::catalog();
  try {
    make_time_source(options);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no results database"), std::string::npos);
  }
  EXPECT_FALSE(parse_time_source("guess"));
}

TEST(Prices, OverridesFromFlagsAndFilesResolveAliases) {
  PriceOverrides flags;
  add_price_assignment("a100=17000", "--price", flags.purchase_usd);
  add_price_assignment(
      "h100=2.5", "--cloud-price", flags.cloud_usd_per_gpu_hour, PriceKind::kCloud);
  const std::string file = test::write_temp_file("prices.toml",
                                                 "[purchase_usd]\na100 = 18000\nrtx-3090 = 900\n"
                                                 "[cloud_usd_per_gpu_hour]\nrtx-3090 = 0.3\n");
  const PriceOverrides merged = merge_price_overrides(load_price_file(file), flags);
  const PriceOverrides canonical = canonical_price_overrides(merged, catalog());
  const GpuPrice a100 = gpu_price(catalog().gpu("a100"), canonical);
  EXPECT_DOUBLE_EQ(a100.purchase_usd, 17000.0);  // the flag wins over the file
  EXPECT_EQ(a100.purchase_source, "--price a100=17000");
  const GpuPrice rtx = gpu_price(catalog().gpu("rtx-3090"), canonical);
  EXPECT_DOUBLE_EQ(rtx.purchase_usd, 900.0);
  EXPECT_DOUBLE_EQ(*rtx.cloud_usd_per_gpu_hour, 0.3);
  EXPECT_DOUBLE_EQ(*gpu_price(catalog().gpu("h100"), canonical).cloud_usd_per_gpu_hour, 2.5);
  const GpuPrice plain = gpu_price(catalog().gpu("a6000"), canonical);
  EXPECT_DOUBLE_EQ(plain.purchase_usd, 4800.0);
  EXPECT_NE(plain.purchase_source.find("gpus/rtx-a6000.toml"), std::string::npos);
}

TEST(Prices, MalformedOverridesAreInputErrors) {
  std::map<std::string, PriceOverride> into;
  for (const char* bad : {"a100", "a100=", "=5", "a100=-3", "a100=lots", "a100=1e400"}) {
    EXPECT_THROW(add_price_assignment(bad, "--price", into), InputError) << bad;
  }
  PriceOverrides unknown;
  unknown.purchase_usd["tpu-v5"] = {1.0, "--price tpu-v5=1"};
  EXPECT_THROW(canonical_price_overrides(unknown, catalog()), InputError);
  EXPECT_THROW(load_price_file(test::write_temp_file("bad_prices.toml", "[rent]\na100 = 1\n")),
               InputError);
  EXPECT_THROW(
      load_price_file(test::write_temp_file("neg_prices.toml", "[purchase_usd]\na100 = -1\n")),
      InputError);
}

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// Prices are held to a physical range (prices.h): no purchase price above $10M, no rental price of
// 0 (the catalog's "unknown") or above $10,000 per GPU-hour.
TEST(Prices, OutOfRangePricesAreRefused) {
  std::map<std::string, PriceOverride> into;
  for (const char* bad : {"a100=1e20", "a100=1e308", "a100=10000001"}) {
    EXPECT_NE(input_error([&] {
                add_price_assignment(bad, "--price", into);
              }).find("is not a purchase price in [0, 1e+07] USD"),
              std::string::npos)
        << bad;
  }
  for (const char* bad : {"a100=0", "a100=-0", "a100=1e308", "a100=10001"}) {
    EXPECT_NE(input_error([&] {
                add_price_assignment(bad, "--cloud-price", into, PriceKind::kCloud);
              }).find("is not a rental price in (0, 10000]"),
              std::string::npos)
        << bad;
  }
  EXPECT_TRUE(into.empty());
  EXPECT_NE(input_error([] {
              load_price_file(
                  test::write_temp_file("zero_rent.toml", "[cloud_usd_per_gpu_hour]\na100 = 0\n"));
            }).find("[cloud_usd_per_gpu_hour] a100: must be a rental price"),
            std::string::npos);
  GpuSpec absurd = catalog().gpu("a100");
  absurd.purchase_usd = 1e308;
  const std::string catalog_error = input_error([&] { gpu_price(absurd, {}); });
  EXPECT_NE(catalog_error.find(absurd.source_path + ": [price] purchase_usd: 1e+308"),
            std::string::npos)
      << catalog_error;
}

// One source names a GPU once: two flags, or an alias and the catalog name, are refused naming
// both; an unknown GPU names the override's origin; a top-level key is called a key.
TEST(Prices, ConflictingOrUnknownOverridesNameTheirOrigin) {
  std::map<std::string, PriceOverride> into;
  add_price_assignment("a100=5", "--price", into);
  EXPECT_EQ(input_error([&] { add_price_assignment("a100=6", "--price", into); }),
            "--price a100=5 and --price a100=6 both price a100; give one");
  const std::string file =
      test::write_temp_file("alias_prices.toml", "[purchase_usd]\na100 = 5\na100-80gb-sxm = 7\n");
  EXPECT_EQ(input_error([&] { canonical_price_overrides(load_price_file(file), catalog()); }),
            fmt::format("{0} [purchase_usd] a100 and {0} [purchase_usd] a100-80gb-sxm both price "
                        "a100-80gb-sxm; give one",
                        file));
  const std::string unknown =
      test::write_temp_file("unknown_prices.toml", "[purchase_usd]\nbogus = 5\n");
  EXPECT_EQ(input_error([&] {
              canonical_price_overrides(load_price_file(unknown), catalog());
            }).rfind(unknown + " [purchase_usd] bogus: unknown GPU 'bogus'", 0),
            0u);
  const std::string top = test::write_temp_file("top_prices.toml", "a100 = 5\n");
  EXPECT_NE(input_error([&] { load_price_file(top); }).find("unknown key 'a100'"),
            std::string::npos);
}

// A row whose figures are not finite or beyond 1e15 is refused naming the option, so no format
// prints inf, a negative zero or an overflowed integer (a 1e-307-year amortisation, a 1e307 price).
TEST(CostAnalysis, NonFiniteOrHugeFiguresAreInputErrors) {
  CostOptions cost = shipped_cost_options();
  const FixedTimeSource source({{{"a100-80gb-sxm", 8}, 10.0}});
  cost.assumptions.amortisation.years = 1e-307;
  EXPECT_NE(input_error([&] {
              analyse_costs(catalog().model("pythia-1b"), options_for({"a100"}, {8}), source, cost);
            }).find("pythia-1b on 8 x a100-80gb-sxm: the amortised cost (USD) would be inf"),
            std::string::npos);
  cost = shipped_cost_options();
  cost.assumptions.energy.usd_per_kwh = 1e308;
  EXPECT_NE(input_error([&] {
              analyse_costs(catalog().model("pythia-1b"), options_for({"a100"}, {8}), source, cost);
            }).find("the energy cost (USD) would be"),
            std::string::npos);
  const FixedTimeSource endless({{{"a100-80gb-sxm", 8}, std::numeric_limits<double>::infinity()}});
  EXPECT_NE(input_error([&] {
              analyse_costs(catalog().model("pythia-1b"),
                            options_for({"a100"}, {8}),
                            endless,
                            shipped_cost_options());
            }).find("the training time (days) would be inf"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudays
