// The host CPU at the command line: `plan --device cpu` (or `--gpu cpu`) plans on this machine's
// measurement, here a cached one; `best --gpu cpu` and `export --gpu cpu` read its trials; asking
// for a CPU and a GPU at once, or for neither, is one clear line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "catalog/host_cpu.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

const std::string kModelFile = std::string(GPUDAYS_TEST_DATA_DIR) + "/bench-gpt-neox.toml";

// A results database path whose probe cache holds this host's measurement (figures of the
// development machine) for one rank and for two (a rank's threads: OMP_NUM_THREADS, else the cores
// split between the ranks), so that plan never runs the probe.
std::string db_with_cached_probe(const std::string& name) {
  const std::string db = test::write_temp_file(name + ".db", "");
  std::filesystem::remove(db);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const char* set = std::getenv("OMP_NUM_THREADS");
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string one_rank = set == nullptr ? "" : set;
  const std::string two_ranks =
      set == nullptr ? std::to_string(std::max<int64_t>(1, cores / 2)) : set;
  const HostMeasurement m{"Cached CPU", 1, 0.08, 0.48, 28.0, int64_t{24} << 30};
  nlohmann::json entries = nlohmann::json::array();
  for (const std::string& threads : {one_rank, two_ranks}) {
    entries.push_back({{"host", host},
                       {"omp_num_threads", threads},
                       {"probed_at", "2026-12-01T00:00:00Z"},
                       {"probe", nlohmann::json::parse(to_probe_line(m))}});
  }
  std::ofstream(std::filesystem::path(db).replace_extension(".host-cpu.json"))
      << nlohmann::json{{"host_cpu_probes", entries}}.dump();
  return db;
}

TEST(HostCpuCli, PlanOnTheCachedMeasurementOfThisMachine) {
  const std::string db = db_with_cached_probe("host_cpu_plan");
  const auto table = test::run_gpudays("plan --model-file " + kModelFile +
                                       " --device cpu --no-calibration --db " + db);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("on 1 x cpu (Cached CPU, 1 threads), fp32"), std::string::npos)
      << table.out;
  const auto json =
      test::run_gpudays("plan --model-file " + kModelFile +
                        " --gpu cpu --gpus-per-node 2 --format json --no-calibration --db " + db);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto best = nlohmann::json::parse(json.out)["best"];
  EXPECT_EQ(best["gpu"], "cpu");
  EXPECT_LE(best["mfu"].get<double>(), 1.0);
}

TEST(HostCpuCli, ACpuAndAGpuAtOnceOrNeitherIsOneLine) {
  const std::string db = db_with_cached_probe("host_cpu_both");
  const auto both = test::run_gpudays("plan --model-file " + kModelFile +
                                      " --device cpu --gpu a100 --no-calibration --db " + db);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("leave out --gpu"), std::string::npos) << both.err;
  const auto neither = test::run_gpudays("plan --model-file " + kModelFile);
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.err.find("--gpu NAME"), std::string::npos) << neither.err;
  EXPECT_NE(neither.err.find("--device cpu"), std::string::npos) << neither.err;
}

// An empty device name is said to be empty, not taken for a missing flag ("trial needs --spec").
TEST(HostCpuCli, AnEmptyDeviceNameIsSaidToBeEmpty) {
  if (test::run_gpudays("trial --check-device cpu").exit_code != 0) {
    GTEST_SKIP() << "this build has no trainer";
  }
  for (const std::string flag : {"--check-device", "--probe-device"}) {
    const auto r = test::run_gpudays("trial " + flag + " ''");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err,
              "gpudays: error: " + flag + ": the device name is empty (cpu, cuda or cuda:N)\n");
  }
}

// A build without LibTorch has no trainer, so no probe of the host CPU: said in one line, not as
// "unknown command 'trial'; valid: ..." from the probe's child; its help names no `trial`.
TEST(HostCpuCli, ABuildWithoutTheTrainerSaysSoInOneLine) {
  const auto trial = test::run_gpudays("trial --probe-device cpu");
  if (trial.exit_code == 0) GTEST_SKIP() << "this build has the trainer";
  const std::string said = "this build has no trainer (built without LibTorch)";
  EXPECT_EQ(trial.exit_code, 2) << trial.err;
  EXPECT_NE(trial.err.find(said), std::string::npos) << trial.err;
  const std::string db = test::fresh_path("no_trainer.db");  // no probe cached next to it
  for (const std::string& args :
       {"plan --model-file " + kModelFile + " --device cpu --db " + db,
        "plan --model-file " + kModelFile + " --gpu cpu --db " + db,
        "results --incomplete --model-file " + kModelFile + " --gpu cpu --db " + db}) {
    const auto r = test::run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("cannot measure the host CPU: " + said), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("unknown command"), std::string::npos) << r.err;
  }
  const auto help = test::run_gpudays("plan --help");
  EXPECT_EQ(help.out.find("gpudays trial --probe-device cpu"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("this build has no"), std::string::npos) << help.out;
}

// Without the trainer, `bench` here would store every trial as rejected, and a later build with it
// would reuse those rows instead of measuring: refused before the database is made.
TEST(HostCpuCli, ABuildWithoutTheTrainerBenchesNothing) {
  if (test::run_gpudays("trial --probe-device cpu").exit_code == 0) {
    GTEST_SKIP() << "this build has the trainer";
  }
  const std::string db = test::fresh_path("no_trainer_bench.db");
  const auto r = test::run_gpudays("bench --model-file " + kModelFile + " --device cpu --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("this build has no trainer (built without LibTorch); `gpudays bench` here"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(HostCpuCli, BestAndExportReadTheHostCpusTrials) {
  const std::string db = db_with_cached_probe("host_cpu_export");
  {
    TrialRecord t;
    t.model = "pythia-14m";
    t.gpu = kHostCpuName;
    t.config.micro_batch_size = 8;
    t.config.grad_acc_steps = 128;
    test::set_measured_step(t, 2.5);
    ResultsDb::open({db, /*read_only=*/false, &test::catalog()}).insert(t);
  }
  const auto best = test::run_gpudays("best --model pythia-14m --gpu cpu --format json --db " + db);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(nlohmann::json::parse(best.out)["best"]["gpu"], "cpu");
  const auto hf = test::run_gpudays("export --model pythia-14m --gpu cpu --db " + db);
  ASSERT_EQ(hf.exit_code, 0) << hf.err;
  EXPECT_EQ(nlohmann::json::parse(hf.out)["per_device_train_batch_size"], 8);
  EXPECT_EQ(nlohmann::json::parse(hf.out)["tf32"], false);
  const auto planned =
      test::run_gpudays("export --model pythia-14m --gpu cpu --source plan --db " + db);
  EXPECT_EQ(planned.exit_code, 2);
  EXPECT_NE(planned.err.find("--source bench"), std::string::npos) << planned.err;
}

}  // namespace
}  // namespace gpudays
