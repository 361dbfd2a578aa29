// `gpudays validate` and the pinning flags of `gpudays plan`, as a user meets them: the report in
// every format, filters, and bad input answered with one line and exit code 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

void expect_input_error(const std::string& args, const std::string& needle) {
  const auto r = run_gpudays(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
}

TEST(ValidateCli, TablePrintsCasesSummariesAndWorst) {
  const auto r = run_gpudays("validate --worst 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle : {"llm-c-scripts",
                             "MAPE",
                             "a100-80gb-sxm",
                             "Worst cases:",
                             "Not planned",
                             "untrusted case"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle;
  }
}

TEST(ValidateCli, JsonHasCasesAndSummaries) {
  const auto r = run_gpudays("validate --split check --format json --worst 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["cases"].empty());
  for (const auto& c : j["cases"]) {
    EXPECT_EQ(c["split"], "check");
    if (c["skipped"] == false) {
      for (const char* key :
           {"metric", "published", "predicted", "error", "sharding", "micro_batch_size"}) {
        EXPECT_TRUE(c.contains(key)) << key;
      }
    }
  }
  EXPECT_GT(j["overall"]["cases"].get<int>(), 0);
  EXPECT_EQ(j["by_split"].size(), 1u);
  EXPECT_EQ(j["worst"].size(), 2u);
}

TEST(ValidateCli, CsvAndGpuFilter) {
  const auto r = run_gpudays("validate --gpu rtx-3090 --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("split,source,case,", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("timm-benchmark-rtx3090"), std::string::npos);
  EXPECT_EQ(r.out.find("a100"), std::string::npos);
}

// One case and where its planned micro-step goes: the table names it, the JSON carries the list.
TEST(ValidateCli, OneCaseWithItsOperations) {
  const std::string name = "lambda-deeplearning-benchmark/rtx4090-1gpu-fp16";
  const auto r = run_gpudays("validate --case " + name + " --ops");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Where a micro-step of " + name + " as planned"), std::string::npos);
  EXPECT_NE(r.out.find("the case " + name + " only (--case"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention_dropout"), std::string::npos);
  EXPECT_EQ(r.out.find("timm-benchmark"), std::string::npos);  // no other case
  const auto j =
      nlohmann::json::parse(run_gpudays("validate --format json --ops --case " + name).out);
  ASSERT_EQ(j["cases"].size(), 1u);
  ASSERT_TRUE(j["cases"][0].contains("ops"));
  EXPECT_GT(j["cases"][0]["ops"].size(), 10u);
  EXPECT_EQ(j["targets"]["selected_case"], name);
  const auto without =
      nlohmann::json::parse(run_gpudays("validate --format json --case rtx4090-1gpu-fp16").out);
  EXPECT_FALSE(without["cases"][0].contains("ops"));
}

TEST(ValidateCli, OperationsNeedOneNamedCase) {
  expect_input_error("validate --ops", "name it with --case");
  expect_input_error("validate --case no-such-case",
                     "no published measurement named 'no-such-case'");
  expect_input_error("validate --case rtx4090-1gpu-fp16 --split fit",
                     "named 'rtx4090-1gpu-fp16' matches --split and --gpu");
  expect_input_error("validate --case rtx4090-1gpu-fp16 --ops --format csv", "not --format csv");
  expect_input_error("validate --fit --case rtx4090-1gpu-fp16", "takes no --split, --gpu, --case");
}

// A --gpu selection is summarised against the targets as what it is: a part of the checking half.
TEST(ValidateCli, TargetsOfAGpuSelectionSayTheyAreOnlyThatGpus) {
  const auto all = run_gpudays("validate");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("\nTargets, checking half: MAPE at most 8%"), std::string::npos);
  const auto one = run_gpudays("validate --gpu v100-16gb");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("Targets, checking half, v100-16gb cases only (--gpu"), std::string::npos)
      << one.out;
  const auto json =
      nlohmann::json::parse(run_gpudays("validate --gpu v100-16gb --format json").out);
  EXPECT_EQ(json["targets"]["selected_gpu"], "v100-16gb");
  EXPECT_TRUE(
      nlohmann::json::parse(run_gpudays("validate --format json").out)["targets"]["selected_gpu"]
          .is_null());
}

TEST(ValidateCli, BadInput) {
  expect_input_error("validate --split both", "--split");
  expect_input_error("validate --gpu a200", "a100-80gb-sxm");
  expect_input_error("validate --format xml", "--format");
  expect_input_error("validate --gpu l40s", "no published measurement");
  expect_input_error("validate --gpu ''", "--gpu: an empty name");  // was: every GPU
  expect_input_error("validate --case ''", "--case: is empty");     // was: every case
}

// --fit prints calibration.toml: a --format or a --worst it would ignore is refused.
TEST(ValidateCli, FitTakesNoFormatOrWorst) {
  expect_input_error("validate --fit --format json", "it takes no --format or --worst");
  expect_input_error("validate --fit --worst 3", "it takes no --format or --worst");
}

// `validate --fit` prints exactly the checked-in configs/calibration.toml.
TEST(ValidateCli, FitPrintsTheCheckedInCalibration) {
  const auto r = run_gpudays("validate --fit");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(test::catalog().config_dir() + "/calibration.toml");
  const std::string checked_in((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(r.out, checked_in);
  expect_input_error("validate --fit --split check", "--fit");
  const auto before = run_gpudays("validate --uncalibrated --format json");
  const auto after = run_gpudays("validate --format json");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(nlohmann::json::parse(before.out)["overall"]["mape"],
            nlohmann::json::parse(after.out)["overall"]["mape"]);
}

TEST(PlanCli, PinnedFlagsPlanOneConfiguration) {
  const auto r = run_gpudays(
      "plan --model pythia-410m --gpu a100 --gpus-per-node 4 --free-lunch on --checkpointing off "
      "--sharding zero_2 --offloading off --micro-batch-size 8 --all --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["best"]["sharding"], "zero_2");
  EXPECT_EQ(j["best"]["micro_batch_size"], 8);
  EXPECT_EQ(j["best"]["free_lunch"], true);
  const auto table = run_gpudays("plan --model pythia-410m --gpu a100 --sharding none");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("(pinned: sharding none)"), std::string::npos) << table.out;
}

TEST(PlanCli, BadPinsAreOneLine) {
  expect_input_error("plan --model pythia-410m --gpu a100 --sharding zero_9", "zero_1");
  expect_input_error("plan --model pythia-410m --gpu a100 --checkpointing yes", "--checkpointing");
  expect_input_error("plan --model pythia-410m --gpu a100 --micro-batch-size 3", "power of two");
  expect_input_error("plan --model pythia-410m --gpu a100 --micro-batch-size 0",
                     "--micro-batch-size");
  expect_input_error("plan --model pythia-410m --gpu a100 --offloading on --sharding none",
                     "offloading needs sharding");
}

}  // namespace
}  // namespace gpudays
