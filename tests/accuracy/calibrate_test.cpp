// Calibration: the planner's step times follow measured trials of the same GPU and model family,
// and the plan shows a configuration's measurement next to its prediction.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "accuracy/calibrate.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

TrialRecord trial(const std::string& model,
                  const std::string& gpu,
                  double measured,
                  double predicted) {
  TrialRecord t;
  t.model = model;
  t.gpu = gpu;
  test::set_measured_step(t, measured);
  t.predicted_step_time_s = predicted;
  t.config.micro_batch_size = static_cast<int64_t>(measured * 1000);  // distinct keys
  return t;
}

TEST(Calibrate, MedianOverSameGpuAndFamily) {
  const std::vector<TrialRecord> trials = {
      trial("pythia-160m", "a100-80gb-sxm", 12.0, 10.0),  // 1.2
      trial("pythia-70m", "a100-80gb-sxm", 13.0, 10.0),   // 1.3
      trial("pythia-1b", "a100-80gb-sxm", 11.0, 10.0),    // 1.1
      trial("vit", "a100-80gb-sxm", 30.0, 10.0),          // other family: ignored
      trial("pythia-160m", "h100-sxm", 50.0, 10.0),       // other GPU: ignored
  };
  const Calibration c =
      calibrate(trials, catalog(), catalog().model("pythia-410m"), "a100-80gb-sxm");
  EXPECT_EQ(c.trials, 3);
  EXPECT_DOUBLE_EQ(c.step_time_factor, 1.2);
  EXPECT_EQ(calibrate(trials, catalog(), catalog().model("mamba"), "a100-80gb-sxm").trials, 0);
}

// A measurement 10x off the prediction (a 0 s row, a stalled machine) says nothing about the
// planner: it is left out, and a calibration built only from such rows is no calibration.
TEST(Calibrate, ImplausibleRatiosAreLeftOut) {
  const std::vector<TrialRecord> trials = {
      trial("pythia-160m", "a100-80gb-sxm", 1e-6, 10.0),  // 1e-7
      trial("pythia-70m", "a100-80gb-sxm", 100.0, 10.0),  // 10
      trial("pythia-1b", "a100-80gb-sxm", 11.0, 10.0),    // 1.1
  };
  const Calibration c =
      calibrate(trials, catalog(), catalog().model("pythia-410m"), "a100-80gb-sxm");
  EXPECT_EQ(c.trials, 1);
  EXPECT_DOUBLE_EQ(c.step_time_factor, 1.1);
  const std::vector<TrialRecord> only_bad = {trials[0], trials[1]};
  EXPECT_EQ(calibrate(only_bad, catalog(), catalog().model("pythia-410m"), "a100-80gb-sxm").trials,
            0);
}

TEST(Calibrate, PlanUsesTheDatabaseAndShowsTheMeasurement) {
  const std::string db_path = test::write_temp_file("calibrate.db", "");
  std::filesystem::remove(db_path);
  const auto plain = nlohmann::json::parse(
      test::run_gpudays("plan --model pythia-410m --gpu a100 --format json --no-calibration").out);
  const auto& best = plain["best"];
  {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    TrialRecord t = trial("pythia-410m",
                          "a100-80gb-sxm",
                          1.25 * best["step_time_s"].get<double>(),
                          best["step_time_s"].get<double>());
    t.config.methods.free_lunch = best["free_lunch"];
    t.config.methods.activation_checkpointing = best["activation_checkpointing"];
    t.config.methods.sharding = parse_sharding(best["sharding"].get<std::string>());
    t.config.methods.offloading = best["offloading"];
    t.config.micro_batch_size = best["micro_batch_size"];
    t.config.grad_acc_steps = best["grad_acc_steps"];
    t.measured.peak_memory_bytes = 1 << 30;
    test::derive_figures(t);
    db.insert(t);
  }
  const auto r =
      test::run_gpudays("plan --model pythia-410m --gpu a100 --format json --db " + db_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calibrated = nlohmann::json::parse(r.out);
  EXPECT_EQ(calibrated["calibration"]["trials"], 1);
  EXPECT_NEAR(calibrated["calibration"]["step_time_factor"].get<double>(), 1.25, 1e-9);
  EXPECT_NEAR(calibrated["best"]["step_time_s"].get<double>(),
              1.25 * best["step_time_s"].get<double>(),
              1e-6);
  EXPECT_FALSE(calibrated["measured_best"].is_null());
  const auto text = test::run_gpudays("plan --model pythia-410m --gpu a100 --db " + db_path);
  std::printf("%s", text.out.c_str());  // docs/bench.md quotes it
  EXPECT_NE(text.out.find("calibrated     step times x1.250"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("measured "), std::string::npos) << text.out;
}

}  // namespace
}  // namespace gpudays
