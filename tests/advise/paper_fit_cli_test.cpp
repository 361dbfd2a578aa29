// `gpudays paper` and `gpudays fit` as a user meets them: the tables, JSON and CSV, fit's catalog
// answer equal to `plan`'s, and bad input answered with one line and exit 2.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "process_dir.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

const nlohmann::json* find_row(const nlohmann::json& rows,
                               const std::string& key,
                               const std::string& value) {
  for (const auto& row : rows)
    if (row[key] == value) return &row;
  return nullptr;
}

TEST(PaperCli, TableFlagsTheImpossibleCellsWithTheReason) {
  const auto r = run_gpudays("paper");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle : {"pythia-1b-4xa100: physically impossible: implies 99.0% MFU",
                             "without synchronising the GPU",
                             "Sources:",
                             "arXiv:2410.23261v1",
                             "original_run"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle;
  }
}

TEST(PaperCli, JsonAndCsvCarryTheSameCells) {
  const auto json = run_gpudays("paper --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["row_kind"], "paper_cell");
  const auto* headline = find_row(j["rows"], "name", "pythia-1b-4xa100");
  ASSERT_NE(headline, nullptr);
  EXPECT_EQ((*headline)["possible"], false);
  EXPECT_NEAR((*headline)["implied_mfu"].get<double>(), 0.990, 0.001);
  EXPECT_GT((*headline)["ours_days"].get<double>(), 17.571102);
  const auto csv = run_gpudays("paper --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("name,kind,model,gpu,gpu_count", 0), 0u);
  size_t lines = 0;
  for (char c : csv.out) lines += c == '\n';
  EXPECT_GE(lines, j["rows"].size() + 1);  // a quoted citation may hold no newline, so >=
}

TEST(PaperCli, ReportHasThePaperSection) {
  const auto dir = test::process_temp_dir().path() / "paper-report";
  std::filesystem::remove_all(dir);
  const auto r = run_gpudays("report --out " + dir.string() +
                             " --models pythia-160m --gpus a100 --counts 1,8");
  if (r.exit_code == 1 && r.err.find("gnuplot") != std::string::npos)
    GTEST_SKIP() << "gnuplot not installed";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir / "report.md");
  std::stringstream md;
  md << in.rdbuf();
  EXPECT_NE(md.str().find("## The paper's numbers beside ours"), std::string::npos);
  EXPECT_NE(md.str().find("pythia-1b-4xa100: "), std::string::npos);
  EXPECT_NE(md.str().find("without synchronising the GPU"), std::string::npos);
}

TEST(FitCli, CatalogAnswerEqualsPlan) {
  const auto fit = run_gpudays("fit --gpu a100 --gpus 4 --days 30 --format json");
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const auto j = nlohmann::json::parse(fit.out);
  const auto* row = find_row(j["rows"], "model", "pythia-1b");
  ASSERT_NE(row, nullptr);
  const auto plan =
      run_gpudays("plan --model pythia-1b --gpu a100 --gpus-per-node 4 --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto p = nlohmann::json::parse(plan.out);
  EXPECT_DOUBLE_EQ((*row)["training_days"].get<double>(), p["best"]["training_days"].get<double>());
  EXPECT_EQ((*row)["within_days"], p["best"]["training_days"].get<double>() <= 30.0);
  ASSERT_TRUE(j["largest_compute_optimal"].is_object());
  EXPECT_LE(j["largest_compute_optimal"]["training_days"].get<double>(), 30.0);
  EXPECT_EQ(j["largest_compute_optimal"]["answer"], "compute_optimal");
}

// The model fit returns, written as a model file, plans to the days fit printed.
TEST(FitCli, WrittenModelPlansToTheSameDays) {
  const std::string path = test::write_temp_file("fit-largest.toml", "");
  const auto fit =
      run_gpudays("fit --gpu rtx-3090 --gpus 8 --days 30 --format json --write-model " + path);
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const auto largest = nlohmann::json::parse(fit.out)["largest_compute_optimal"];
  ASSERT_TRUE(largest.is_object());
  const auto plan =
      run_gpudays("plan --model-file " + path + " --gpu rtx-3090 --gpus-per-node 8 --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto best = nlohmann::json::parse(plan.out)["best"];
  EXPECT_EQ(best["model"], largest["model"]);
  EXPECT_DOUBLE_EQ(best["training_days"].get<double>(), largest["training_days"].get<double>());
  // plan's JSON carries bytes as a whole number.
  EXPECT_NEAR(
      best["peak_memory_bytes"].get<double>(), largest["peak_memory_bytes"].get<double>(), 1.0);
}

TEST(FitCli, TableNamesTheLargestModelAndTheCheapestHardware) {
  const auto r = run_gpudays("fit --gpu rtx-3090 --gpus 8 --days 30");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("Largest compute-optimal model of the gpt_neox (recipe of pythia-1b) family"),
      std::string::npos);
  const auto hw =
      run_gpudays("fit --model pythia-160m --days 2 --candidates a100,h100 --format csv");
  ASSERT_EQ(hw.exit_code, 0) << hw.err;
  EXPECT_EQ(hw.out.rfind("answer,model,gpu,gpu_count", 0), 0u);
  EXPECT_NE(hw.out.find("hardware,pythia-160m,"), std::string::npos);
}

TEST(FitCli, BadInputIsOneLineAndExitTwo) {
  for (const char* args : {"fit --gpu a100 --gpus 3 --days 30",
                           "fit --gpu a100 --gpus 4",
                           "fit --gpu a100 --gpus 4 --days 30 --family vit",
                           "fit --days 30",
                           "fit --model no-such-model --days 3",
                           "fit --gpu no-such-gpu --gpus 4 --days 3",
                           "fit --gpu a100 --gpus 4 --days -1",
                           "paper --source nowhere"}) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// The compute-optimal options with --model (which answers which hardware) would do nothing: they
// are refused, and nothing is written; an empty --write-model or --family is said to be empty or
// unknown; a family of another kind is named as such; a count the planner cannot take is refused.
TEST(FitCli, OptionsThatWouldDoNothingAreRefused) {
  const std::string model_path = test::fresh_path("fit-not-written.toml");
  const std::pair<std::string, std::string> cases[] = {
      {"fit --model pythia-1b --days 30 --write-model " + model_path,
       "--write-model is for --gpu G --gpus N (the largest compute-optimal model); with --model "
       "it would do nothing"},
      {"fit --model pythia-1b --days 30 --family llama", "--family is for --gpu G --gpus N"},
      {"fit --model pythia-1b --days 30 --tokens-per-param 40",
       "--tokens-per-param is for --gpu G --gpus N"},
      {"fit --gpu a100 --gpus 4 --days 30 --write-model ''", "--write-model: the path is empty"},
      {"fit --gpu a100 --gpus 4 --days 30 --family ''",
       "unknown compute-optimal family ''; valid: gpt_neox, roberta, llama, or a catalog "
       "transformer language model"},
      {"fit --gpu a100 --gpus 4 --days 30 --family vit",
       "compute-optimal family 'vit' is a vit model, not a transformer language model"},
      {"fit --gpu a100 --gpus 32776 --days 30", "the planner takes at most 4096 nodes"},
      {"fit --model pythia-1b --days 30 --counts 8,32776", "the planner takes at most 4096 nodes"},
      {"fit --gpu a100 --gpus 8 --counts 5 --days 30", "--gpus excludes --counts"},
      {"cost --model pythia-1b --db gpudays.db",
       "--db gives measured trials to --source bench; --source plan (the default) reads none"},
      {"paper --source plan --db gpudays.db", "--db gives measured trials to --source bench"},
  };
  for (const auto& [args, needle] : cases) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(model_path));
}

// No compute-optimal model meets the limits: --write-model's file is left as it was, and a note
// on stderr says it was not written.
TEST(FitCli, WriteModelWithoutAnAnswerSaysSoAndKeepsTheFile) {
  const std::string path = test::write_temp_file("fit-keep.toml", "# keep me\n");
  const auto r = run_gpudays("fit --gpu a100 --gpus 1 --days 1e-300 --write-model " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.err,
      "gpudays: note: no compute-optimal model meets the limits; " + path + " was not written\n");
  EXPECT_EQ(test::read_file(path), "# keep me\n");
}

// --write-model may add a model to the catalog fit reads, never replace a file fit read: a catalog
// model or the calibration is refused with one line and left as it was.
TEST(FitCli, WriteModelNeverReplacesAnInput) {
  namespace fs = std::filesystem;
  const fs::path dir = test::process_temp_dir().fresh_dir("fit-catalog");
  fs::copy(test::catalog().config_dir(), dir, fs::copy_options::recursive);
  const std::string fit = "--config-dir " + dir.string() + " fit --gpu a100 --gpus 8 --days 30";
  for (const fs::path& input : {dir / "models" / "pythia-1b.toml", dir / "calibration.toml"}) {
    const std::string before = test::read_file(input.string());
    const auto r = run_gpudays(fit + " --write-model " + input.string());
    EXPECT_EQ(r.exit_code, 2) << input << ": " << r.err;
    EXPECT_EQ(r.err,
              fmt::format("gpudays: error: {} is an input and an output (--write-model {}); "
                          "choose another output\n",
                          input.string(),
                          input.string()));
    EXPECT_EQ(test::read_file(input.string()), before) << input;
  }
  const fs::path added = dir / "models" / "fit-largest.toml";
  const auto r = run_gpudays(fit + " --write-model " + added.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto listed = run_gpudays("--config-dir " + dir.string() + " models --format csv");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(added.string()), std::string::npos) << listed.out;
}

}  // namespace
}  // namespace gpudays
