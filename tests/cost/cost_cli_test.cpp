// `gpudays cost` as a user meets it: the table with frontier and query answers, JSON and CSV,
// infeasible options listed, price overrides, and bad input answered with one line and exit 2.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

const nlohmann::json* find_row(const nlohmann::json& j, const std::string& gpu, int64_t count) {
  for (const auto& row : j["rows"]) {
    if (row["gpu"] == gpu && row["gpu_count"] == count) return &row;
  }
  return nullptr;
}

// Prices and an energy price of -0 are 0: no cost in the table or the JSON prints as -0 (the
// flags themselves are quoted as given, as the prices' sources). A rental price of 0 (or -0) is
// refused: 0 is the catalog's "unknown".
TEST(CostCli, MinusZeroPricesNeverPrintNegativeZero) {
  const std::string args =
      "cost --model pythia-14m --gpus a100 --counts 1 --price a100=-0 "
      "--usd-per-kwh -0 --grid-gco2-per-kwh -0";
  const auto table = run_gpudays(args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* bad : {" -0", "$-0", "-0.00"}) {
    EXPECT_EQ(table.out.find(bad), std::string::npos) << bad << " in\n" << table.out;
  }
  const auto json = run_gpudays(args + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.find(": -0"), std::string::npos) << json.out;
  const auto row = nlohmann::json::parse(json.out)["rows"][0];
  EXPECT_FALSE(std::signbit(row["energy_usd"].get<double>()));
  for (const char* zero : {"a100=0", "a100=-0"}) {
    const auto r = run_gpudays(args + " --cloud-price " + zero);
    EXPECT_EQ(r.exit_code, 2) << zero;
    EXPECT_NE(r.err.find("is not a rental price in (0, 10000]"), std::string::npos) << r.err;
  }
}

// The reproductions of a hostile-input review: huge prices, a tiny amortisation period and huge
// cost-config values printed "-0" (an overflowed integer) in the table, "inf" in Markdown, an empty
// CSV field and null in JSON. Each is now one line and exit 2 in every format, before any row.
TEST(CostCli, AbsurdPricesAndAssumptionsAreRefusedInEveryFormat) {
  const std::string shipped = test::read_file(test::catalog().config_dir() + "/cost/cost.toml");
  const auto config_with = [&](const char* name, const std::string& from, const std::string& to) {
    std::string text = shipped;
    text.replace(text.find(from), from.size(), to);
    return " --cost-config " + test::write_temp_file(name, text);
  };
  const std::pair<std::string, const char*> cases[] = {
      {"--price a100=1e20", "is not a purchase price in [0, 1e+07] USD"},
      {"--price a100=9e18", "is not a purchase price"},
      {"--price a100=1e308", "is not a purchase price"},
      {"--cloud-price a100=1e308 --cost-basis cloud", "is not a rental price"},
      {"--amortisation-years 1e-300", "--amortisation-years: '1e-300' is not in [0.01, 100]"},
      {config_with("cc-kwh.toml", "usd_per_kwh = 0.13", "usd_per_kwh = 1e308"),
       "usd_per_kwh: 1e+308 is not in [0, 100]"},
      {config_with("cc-co2.toml", "grid_gco2_per_kwh = 436.0", "grid_gco2_per_kwh = 1e308"),
       "grid_gco2_per_kwh: 1e+308 is not in [0, 5000]"},
      {config_with("cc-years.toml", "years = 5.0", "years = 1e-300"), "years: 1e-300 is not in"},
      {config_with("cc-usd.toml", "10500]", "9223372036854775807]"), "usd: 9.22337e+18 is not in"},
      {config_with("cc-power.toml", "power_fraction_of_tdp = 0.8", "power_fraction_of_tdp = 1.5"),
       "power_fraction_of_tdp: 1.5 is not in (0, 1]"},
  };
  for (const auto& [flags, needle] : cases) {
    for (const char* format : {"table", "markdown", "csv", "json"}) {
      const std::string args = "cost --model pythia-1b --gpus a100 --counts 1,8 --budget 100000 " +
                               flags + " --format " + format;
      const auto r = run_gpudays(args);
      EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
      EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
      EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    }
  }
}

// One value per GPU and source: two --price flags, or a prices file naming a GPU by its alias and
// its catalog name, are refused naming both; an unknown GPU in a prices file names the file.
TEST(CostCli, ConflictingPriceOverridesAreRefusedNamingBoth) {
  const auto flags =
      run_gpudays("cost --model pythia-1b --gpus a100 --price a100=5 --price a100=6");
  EXPECT_EQ(flags.exit_code, 2);
  EXPECT_EQ(flags.err,
            "gpudays: error: --price a100=5 and --price a100=6 both price a100; give one\n");
  const std::string file = test::write_temp_file("cli_alias_prices.toml",
                                                 "[purchase_usd]\na100 = 5\na100-80gb-sxm = 7\n");
  const auto alias = run_gpudays("cost --model pythia-1b --gpus a100 --prices " + file);
  EXPECT_EQ(alias.exit_code, 2);
  EXPECT_NE(alias.err.find("a100 and " + file + " [purchase_usd] a100-80gb-sxm both price"),
            std::string::npos)
      << alias.err;
  // A flag still wins over the file for the same GPU, by any of its names.
  const std::string one = test::write_temp_file("cli_one_price.toml", "[purchase_usd]\na100 = 5\n");
  const auto wins =
      run_gpudays("cost --model pythia-1b --gpus a100 --counts 1 --format json --prices " + one +
                  " --price a100-80gb-sxm=6");
  ASSERT_EQ(wins.exit_code, 0) << wins.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(wins.out)["rows"][0]["gpu_usd"].get<double>(), 6.0);
  const std::string unknown =
      test::write_temp_file("cli_unknown_prices.toml", "[purchase_usd]\nbogus = 5\n");
  const auto r = run_gpudays("cost --model pythia-1b --prices " + unknown);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("gpudays: error: " + unknown + " [purchase_usd] bogus: unknown GPU", 0), 0u)
      << r.err;
  // A price for a GPU that is not costed would do nothing: refused, naming the flag.
  const auto stray = run_gpudays("cost --model pythia-1b --gpus a100 --price h100=5");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_EQ(stray.err,
            "gpudays: error: --price h100=5: h100-sxm is not among the GPUs costed (--gpus)\n");
}

// A cluster's partitions of one GPU, named by an alias or by its catalog name: charging alike they
// are one price; charging differently (a short and a long queue) --cloud-price chooses, and
// without it the error names both partitions.
TEST(CostCli, ClusterPartitionsOfOneGpuArePricedOnce) {
  const auto cluster = [](const std::string& name, double second_price) {
    return test::write_temp_file(
        name,
        fmt::format("[partitions.short]\ngpu = \"a100\"\ngpus_per_node = 8\n"
                    "price_per_gpu_hour = 1.5\n[partitions.long]\ngpu = \"a100-80gb-sxm\"\n"
                    "gpus_per_node = 8\nprice_per_gpu_hour = {}\n",
                    second_price));
  };
  const std::string cost = "cost --model pythia-1b --gpus a100 --counts 8 --format json ";
  const auto alike = run_gpudays(cost + "--cluster " + cluster("cl_alike.toml", 1.5));
  EXPECT_EQ(alike.exit_code, 0) << alike.err;
  const std::string two = cluster("cl_two_prices.toml", 2.0);
  const auto ambiguous = run_gpudays(cost + "--cluster " + two);
  EXPECT_EQ(ambiguous.exit_code, 2);
  EXPECT_NE(ambiguous.err.find("partitions 'long' and 'short' charge a100-80gb-sxm 2 and 1.5 USD "
                               "per GPU-hour; choose one with --cloud-price a100-80gb-sxm=USD"),
            std::string::npos)
      << ambiguous.err;
  const auto chosen = run_gpudays(cost + "--cluster " + two + " --cloud-price a100=2");
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
}

// --counts beyond what the planner takes (4096 nodes of 8) is a usage error, not a row note.
TEST(CostCli, CountsBeyondThePlannersNodesAreUsageErrors) {
  const auto r = run_gpudays("cost --model pythia-1b --gpus a100 --counts 8,32776");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("32776 GPUs need 4097 nodes of 8; the planner takes at most 4096 nodes"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
  const auto help = run_gpudays("cost --help");
  EXPECT_NE(help.out.find("at most 4096 nodes"), std::string::npos);
}

TEST(CostCli, TableShowsFrontierQueriesAndSources) {
  const auto r = run_gpudays("cost --model pythia-1b --max-days 30 --budget 100000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle : {"Pareto frontier",
                             "--max-days 30: cheapest is",
                             "--budget $100,000: fastest is",
                             "Base machine: 1 GPU $1,000",
                             "rtx-3090",
                             "n/a",
                             "Khandelwal"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle;
  }
}

TEST(CostCli, JsonCarriesTheReferenceArithmetic) {
  const auto r = run_gpudays("cost --model pythia-1b --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 16u);  // 4 GPU types x 4 counts
  const auto* two_3090 = find_row(j, "rtx-3090", 2);
  const auto* four_h100 = find_row(j, "h100-sxm", 4);
  ASSERT_TRUE(two_3090 != nullptr && four_h100 != nullptr);
  EXPECT_DOUBLE_EQ((*two_3090)["purchase_usd"].get<double>(), 4100.0);
  EXPECT_DOUBLE_EQ((*four_h100)["purchase_usd"].get<double>(), 127500.0);
  EXPECT_TRUE((*two_3090)["cloud_usd"].is_null());  // no rental price: null, never 0
  const double days = (*four_h100)["training_days"].get<double>();
  EXPECT_NEAR((*four_h100)["amortised_usd"].get<double>(), 127500.0 * days / 1825.0, 1e-6);
  EXPECT_EQ(j["assumptions"]["amortisation_years"], 5.0);
  EXPECT_TRUE(j["max_days"].is_null());
}

TEST(CostCli, CsvHasOneRowPerOption) {
  const auto r = run_gpudays(
      "cost --model pythia-160m --gpus a100,h100 --counts 1,8,16 "
      "--format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 7);
  EXPECT_EQ(r.out.rfind("model,gpu,gpu_count,num_nodes,gpus_per_node,fits,training_days", 0), 0u);
}

TEST(CostCli, InfeasibleOptionsAreListedWithTheReason) {
  const auto r = run_gpudays("cost --model pythia-1b --gpus v100,a100 --counts 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto* v100 = find_row(j, "v100-32gb", 1);
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ((*v100)["fits"], false);
  EXPECT_TRUE((*v100)["training_days"].is_null());
  EXPECT_NE((*v100)["reason"].get<std::string>().find("bf16"), std::string::npos);
  const auto table = run_gpudays("cost --model pythia-1b --gpus v100 --counts 1");
  EXPECT_NE(table.out.find("infeasible"), std::string::npos);
  EXPECT_NE(table.out.find("none (nothing runs)"), std::string::npos);
}

TEST(CostCli, PriceOverridesChangeThePurchaseCost) {
  const auto r = run_gpudays(
      "cost --model pythia-160m --gpus a100 --counts 4 --price a100=17000 "
      "--cloud-price a100=1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["rows"][0]["purchase_usd"].get<double>(), 4 * 17000.0 + 7500.0);
  EXPECT_EQ(j["rows"][0]["gpu_price_source"], "--price a100=17000");
  EXPECT_NEAR(
      j["rows"][0]["cloud_usd"].get<double>(), j["rows"][0]["gpu_days"].get<double>() * 24.0, 1e-6);
}

// GPUs capped below their TDP train slower and draw at most the cap; the summary and JSON say so;
// measured times (--source bench) and a cap outside a quarter of the TDP to the TDP are refused.
TEST(CostCli, PowerCappedGpusTrainSlowerAndDrawLess) {
  const std::string cost = "cost --model pythia-160m --gpus a100 --counts 4 --format json";
  const auto full = run_gpudays(cost);
  const auto capped = run_gpudays(cost + " --power-limit-fraction 0.5");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  const auto f = nlohmann::json::parse(full.out)["rows"][0];
  const auto c = nlohmann::json::parse(capped.out);
  const auto row = c["rows"][0];
  const double slower = row["training_days"].get<double>() / f["training_days"].get<double>();
  EXPECT_GT(slower, 1.0);
  EXPECT_LE(slower, 1.0 / std::cbrt(0.5) + 1e-9) << "memory traffic keeps its clock";
  // Energy: days x draw, the draw at most half the TDP instead of 0.8 of it.
  EXPECT_NEAR(
      row["energy_kwh"].get<double>() / f["energy_kwh"].get<double>(), slower * 0.5 / 0.8, 1e-6);
  EXPECT_EQ(c["assumptions"]["power_limit_fraction"], 0.5);
  const auto table = run_gpudays(
      "cost --model pythia-160m --gpus a100 --counts 4 "
      "--power-limit-fraction 0.5");
  EXPECT_NE(table.out.find("GPUs capped at 0.5 of their TDP: compute at 0.794 of its rate"),
            std::string::npos)
      << table.out;
  // fit takes the same cap: the same model on the same GPUs takes longer.
  const auto fit = run_gpudays("fit --gpu a100 --gpus 4 --days 3000 --format json");
  const auto fit_capped =
      run_gpudays("fit --gpu a100 --gpus 4 --days 3000 --format json --power-limit-fraction 0.5");
  ASSERT_EQ(fit_capped.exit_code, 0) << fit_capped.err;
  const auto days_of = [](const std::string& out) {
    const nlohmann::json j = nlohmann::json::parse(out);
    for (const auto& r : j["rows"]) {
      if (r["model"] == "pythia-160m") return r["training_days"].get<double>();
    }
    return 0.0;
  };
  EXPECT_GT(days_of(fit.out), 0.0);
  EXPECT_GT(days_of(fit_capped.out), days_of(fit.out));
  for (const char* bad : {"--power-limit-fraction 0.1",
                          "--power-limit-fraction 1.5",
                          "--power-limit-fraction 0.5 --source bench"}) {
    const auto r =
        run_gpudays("cost --model pythia-160m --gpus a100 --counts 4 " + std::string(bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << bad << ": " << r.err;
  }
}

TEST(CostCli, BadInputIsOneLineAndExitTwo) {
  const std::pair<const char*, const char*> cases[] = {
      {"cost --model pythia-1b --source bench --db /nonexistent/gpudays.db", "no results database"},
      {"cost --model pythia-1b --counts 3", "valid counts: 1, 2, 4, 8 or a multiple of 8"},
      {"cost --model pythia-1b --gpus tpu", "unknown GPU 'tpu'"},
      {"cost --model pythia-1b --price a100", "expected NAME=NUMBER"},
      {"cost --model pythia-1b --price tpu=5", "unknown GPU 'tpu'"},
      {"cost --model pythia-1b --budget -5", "--budget: '-5' is not in (0, "},
      {"cost --model pythia-1b --max-days soon", "is not a decimal number"},
      // Decimal only, as the integer options are: no hexadecimal reading of 0x10 as 16.
      {"cost --model pythia-1b --max-days 0x10", "'0x10' is not a decimal number"},
      {"cost --model pythia-1b --max-days 0x1p4", "'0x1p4' is not a decimal number"},
      // Above an open bound by a subnormal: no computation can tell it from the bound.
      {"cost --model pythia-1b --max-days 1e-320",
       "--max-days: '1e-320' cannot be told from 0; give a number in (0, "},
      {"cost --model pythia-1b --budget 4.9e-324", "'4.9e-324' cannot be told from 0"},
      {"cost --model pythia-1b --power-fraction 1e-310", "'1e-310' cannot be told from 0"},
      {"cost --model pythia-1b --cost-basis lease", "--cost-basis"},
      {"cost --model nope", "unknown model 'nope'"},
      {"cost", "--model is required"},
  };
  for (const auto& [args, needle] : cases) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
  }
}

TEST(CostCli, HelpNamesTheFormulas) {
  const auto r = run_gpudays("cost --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* needle : {"--max-days", "--budget", "--price", "--source", "(5 x 365)"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle;
  }
}

}  // namespace
}  // namespace gpudays

namespace gpudays {
namespace {

TEST(CostCli, BenchSourceUsesTheFastestMeasuredTrial) {
  const std::string db_path = test::write_temp_file("cost_bench.db", "");
  std::filesystem::remove(db_path);
  {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    for (int64_t micro : {4, 8}) {
      TrialRecord t;
      t.model = "pythia-1b";
      t.gpu = "a100-80gb-sxm";
      t.measured.device_name = "NVIDIA A100-SXM4-80GB";
      t.cluster.gpus_per_node = 4;
      t.config.methods.free_lunch = true;
      t.config.micro_batch_size = micro;
      t.config.grad_acc_steps = 256 / micro;
      test::set_measured_step(t, micro == 8 ? 20.0 : 25.0);
      db.insert(t);
    }
  }
  const auto r = test::run_gpudays(
      "cost --model pythia-1b --gpus a100 --counts 4,8 --source bench "
      "--format json --db " +
      db_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["fits"], true);
  EXPECT_NEAR(j["rows"][0]["training_days"].get<double>(), 143000 * 20.0 / 86400, 1e-9);
  EXPECT_EQ(j["rows"][1]["fits"], false);
  EXPECT_NE(j["rows"][1]["reason"].get<std::string>().find("no successful benchmark trial"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudays
