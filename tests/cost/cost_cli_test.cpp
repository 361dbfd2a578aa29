// `gpudays cost` as a user meets it: the table with frontier and query answers, JSON and CSV,
// infeasible options listed, price overrides, and bad input answered with one line and exit 2.
#include <gtest/gtest.h>

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
// flags themselves are quoted as given, as the prices' sources).
TEST(CostCli, MinusZeroPricesNeverPrintNegativeZero) {
  const std::string args =
      "cost --model pythia-14m --gpus a100 --counts 1 --price a100=-0 --cloud-price a100=-0 "
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
  EXPECT_FALSE(std::signbit(row["cloud_usd"].get<double>()));
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

TEST(CostCli, BadInputIsOneLineAndExitTwo) {
  const std::pair<const char*, const char*> cases[] = {
      {"cost --model pythia-1b --source bench --db /nonexistent/gpudays.db", "no results database"},
      {"cost --model pythia-1b --counts 3", "valid counts: 1, 2, 4, 8 or a multiple of 8"},
      {"cost --model pythia-1b --gpus tpu", "unknown GPU 'tpu'"},
      {"cost --model pythia-1b --price a100", "expected NAME=NUMBER"},
      {"cost --model pythia-1b --price tpu=5", "unknown GPU 'tpu'"},
      {"cost --model pythia-1b --budget -5", "--budget: '-5' is not in (0, "},
      {"cost --model pythia-1b --max-days soon", "is not a number"},
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
