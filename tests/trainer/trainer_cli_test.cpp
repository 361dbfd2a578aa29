// `gpudays train` end to end on the CPU with a tiny GPT-NeoX on token data of known entropy: the
// held-out loss falls well below the unigram entropy; a run killed with SIGKILL at random points
// (checkpoint writes included) and resumed gives the uninterrupted run's loss curve exactly
// (damaged checkpoints: tests/workflow); SIGTERM checkpoints and exits 143;
// two ranks under mpirun give one rank's losses, and a run resumes on 2 ranks from 4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <tuple>

#include <nlohmann/json.hpp>

#include "../process_dir.h"
#include "common/child_process.h"
#include "distributed/launcher.h"
#include "engine/device.h"
#include "train_cli_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

using test::expect_same_losses;
using test::sh;

using test::Fixture;
using test::make_run;
using test::metrics;
using test::train_command;

const std::string kPlain = "sharding = \"none\"";
const std::string kCheckpoints =
    "checkpoint_interval = 5\nkeep_checkpoints = 2\neval_interval = 10";

TEST(TrainCli, HeldOutLossFallsWellBelowTheUnigramEntropy) {
  const Fixture f = make_run("learns", kPlain, "checkpoint_interval = 0\neval_interval = 50", 200);
  const ChildResult r = sh(train_command(f, "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("step 200/200"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tok/s"), std::string::npos);
  const auto m = metrics(f, "out");
  ASSERT_EQ(m.size(), 200u);
  const double eval = m.at(200).at("eval_loss").get<double>();
  EXPECT_GT(f.unigram_nats, 4.0);
  EXPECT_LT(eval, 0.5 * f.unigram_nats) << "held-out " << eval << " vs unigram " << f.unigram_nats;
  EXPECT_TRUE(fs::exists(f.dir / "out/checkpoints/step-200/model.safetensors"));
}

// SIGKILL at random times within an uninterrupted run's wall time (checkpoint writes included: one
// every 5 steps), resuming each time; then a last resume runs to the end.
TEST(TrainCli, KilledAtRandomPointsAndResumedGivesTheSameLossCurve) {
  const Fixture f = make_run("kill9", kPlain, kCheckpoints, 40);
  const ChildResult whole = sh(train_command(f, "whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::mt19937 rng(11);
  int kills = 0;
  double scale = 0.8;  // halved when a run ends before its kill (the machine's speed varies)
  for (int attempt = 0; attempt < 10 && kills < 3; ++attempt) {
    const double u = static_cast<double>(rng() % 1000) / 1000;
    const double after_s = whole.wall_s * scale * (0.25 + 0.75 * u);
    const ChildResult r = sh("timeout -s KILL " + std::to_string(after_s) + " " +
                             train_command(f, "killed", "--resume"));
    if (r.exit_code != 0) {
      ++kills;
    } else if (kills == 0) {
      fs::remove_all(f.dir / "killed");
      scale /= 2;
    } else {
      break;
    }
  }
  EXPECT_GE(kills, 1) << "never killed";
  const ChildResult last = sh(train_command(f, "killed", "--resume"));
  ASSERT_EQ(last.exit_code, 0) << last.err;
  expect_same_losses(metrics(f, "whole"), metrics(f, "killed"), 0.0);
}

// SIGKILL while checkpoint step-15 is half written (the test-only hook
// GPUDAYS_TEST_STALL_CHECKPOINT stops the writer after the weights, before the optimizer files and
// the manifest): the staging directory is left behind, never taken for a checkpoint; --resume
// continues from step-10 and the loss curve is the uninterrupted run's bit for bit.
TEST(TrainCli, KilledWhileWritingACheckpointResumesFromThePreviousOne) {
  const Fixture f = make_run("stall", kPlain, kCheckpoints, 20);
  const ChildResult whole = sh(train_command(f, "whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const fs::path err = f.dir / "stalled.err";
  const ChildResult killed =
      sh("GPUDAYS_TEST_STALL_CHECKPOINT=15 " + train_command(f, "killed") + " 2>" + err.string() +
         " & pid=$!; for i in $(seq 3000); do grep -q 'stalled writing checkpoint step-15' " +
         err.string() + " && break; sleep 0.1; done; kill -9 $pid; wait $pid");
  EXPECT_EQ(killed.exit_code, 128 + 9);
  const fs::path checkpoints = f.dir / "killed/checkpoints";
  ASSERT_TRUE(fs::exists(checkpoints / ".step-15.tmp/model.safetensors")) << "not killed mid-write";
  EXPECT_FALSE(fs::exists(checkpoints / ".step-15.tmp/manifest.json"));
  EXPECT_FALSE(fs::exists(checkpoints / "step-15"));
  ASSERT_TRUE(fs::exists(checkpoints / "step-10/manifest.json"));
  const ChildResult resumed = sh(train_command(f, "killed", "--resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resumed from " + (checkpoints / "step-10").string()),
            std::string::npos)
      << resumed.err;
  EXPECT_FALSE(fs::exists(checkpoints / ".step-15.tmp"));
  expect_same_losses(metrics(f, "whole"), metrics(f, "killed"), 0.0);
}

// One process trains at ZeRO stage 1 to step 10 (with offloading: one process shards only then);
// the step-5 checkpoint resumes at stage 3 and without sharding (the optimizer's moments re-sliced
// parameter by parameter from stage 1's single slot into one slot per block, or per parameter). The
// losses equal the uninterrupted stage-1 run's within 1e-5 (the stages sum the gradient norm in
// another order; measured: at most a few 1e-7); moments lost or misplaced change them by far more.
TEST(TrainCli, ResumesAtAnotherShardingStage) {
  const std::string offloaded = "\noffloading = true";
  const Fixture f = make_run("restage", "sharding = \"zero_1\"" + offloaded, kCheckpoints, 10);
  const ChildResult whole = sh(train_command(f, "whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  for (const std::string& methods : {"sharding = \"zero_3\"" + offloaded, std::string(kPlain)}) {
    const Fixture g =
        make_run("restage_" + std::to_string(methods.size()), methods, kCheckpoints, 10);
    fs::copy(f.dir / "whole", g.dir / "re", fs::copy_options::recursive);
    fs::remove_all(g.dir / "re/checkpoints/step-10");
    const ChildResult re = sh(train_command(g, "re", "--resume"));
    ASSERT_EQ(re.exit_code, 0) << re.err;
    EXPECT_NE(re.err.find("step-5"), std::string::npos) << re.err;
    const auto a = metrics(f, "whole"), b = metrics(g, "re");
    expect_same_losses(a, b, 1e-5);
    double max_diff = 0.0;
    for (const auto& [step, j] : a) {
      max_diff = std::max(
          max_diff, std::abs(j.at("loss").get<double>() - b.at(step).at("loss").get<double>()));
    }
    std::cout << "zero_1 -> " << methods << ": largest loss difference " << max_diff << "\n";
  }
}

TEST(TrainCli, SigtermCheckpointsAndExits143) {  // and says so, without a word of trials
  const Fixture f = make_run("term", kPlain, "checkpoint_interval = 0", 100000);
  // SIGTERM once the run has logged a step (as Slurm's pre-emption would send it).
  const std::string metrics_file = (f.dir / "out/metrics.jsonl").string();
  const ChildResult r = sh(train_command(f, "out") + " & pid=$!; while [ ! -s " + metrics_file +
                           " ]; do sleep 0.1; done; sleep 0.3; kill -TERM $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_NE(r.err.find("continue with --resume"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("trial"), std::string::npos) << r.err;
  const auto m = metrics(f, "out");
  ASSERT_FALSE(m.empty());
  const int64_t last = m.rbegin()->first;
  EXPECT_TRUE(
      fs::exists(f.dir / ("out/checkpoints/step-" + std::to_string(last)) / "manifest.json"))
      << "no checkpoint at the last step " << last;
}

TEST(TrainCli, UnknownRunFileKeysAndBadDataAreOneLineErrors) {
  const Fixture f = make_run("bad", kPlain, "checkpoint_intervall = 5", 10);
  const ChildResult r = sh(train_command(f, "out"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("checkpoint_intervall"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("docs/train.md"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("docs/catalog.md"), std::string::npos) << r.err;
  const Fixture g = make_run("missing", kPlain, "", 10);
  const ChildResult d =
      sh(std::string(GPUDAYS_BINARY) + " train --config " + (g.dir / "run.toml").string() +
         " --data /nonexistent.u16 --out " + (g.dir / "out").string());
  EXPECT_EQ(d.exit_code, 2) << d.err;
  EXPECT_EQ(std::count(d.err.begin(), d.err.end(), '\n'), 1) << d.err;
  // A run file's unknown GPU is named with the valid ones (not "no CUDA support"); a model file
  // that is a directory is named as one.
  const std::string run = (g.dir / "run.toml").string();
  std::ifstream in(run);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  for (const auto& [from, to, needle] :
       {std::tuple<std::string, std::string, std::string>{
            "gpu = \"cpu\"", "gpu = \"a1000\"", "unknown GPU 'a1000'"},
        {"model_file = \"tiny.toml\"",
         "model_file = \"" + g.dir.string() + "\"",
         "is a directory; give a model TOML file"}}) {
    std::string edited = text;
    ASSERT_NE(edited.find(from), std::string::npos) << from;
    edited.replace(edited.find(from), from.size(), to);
    std::ofstream(run) << edited;
    const ChildResult e = sh(std::string(GPUDAYS_BINARY) + " train --config " + run + " --data " +
                             g.data + " --out " + (g.dir / "out").string());
    EXPECT_EQ(e.exit_code, 2) << e.err;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
    EXPECT_NE(e.err.find(needle), std::string::npos) << e.err;
  }
}

// A run on a GPU this build or machine does not have is a runtime failure (exit 1, as `bench`
// says it), one line, before anything is written.
TEST(TrainCli, ACudaRunWithoutAGpuIsARuntimeFailure) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA GPU is visible";
  const Fixture f = make_run("nogpu", kPlain, "", 10);
  const std::string run = (f.dir / "run.toml").string();
  std::ifstream in(run);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  ASSERT_NE(text.find("gpu = \"cpu\""), std::string::npos);
  text.replace(text.find("gpu = \"cpu\""), 11, "gpu = \"a100-80gb-sxm\"");
  std::ofstream(run) << text;
  const ChildResult r = sh(train_command(f, "out"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(cuda_built() ? "no CUDA GPU is visible" : "no CUDA support"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(f.dir / "out" / "checkpoints")) << "a checkpoint folder was made";
}

TEST(TrainCli, HelpFooterNamesTheRowCommandsOfEveryFormat) {
  const ChildResult r = sh(std::string(GPUDAYS_BINARY) + " --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("models, gpus, paper, fit)"), std::string::npos) << r.out;
}

// "mpirun ... -np N " from the launcher's own command line (distributed/launcher.h).
std::string mpirun(int ranks) {
  // A named LaunchOptions: GCC 12 misreads a designated-initializer temporary's nested default
  // (srun.mpi) as uninitialized (-Wmaybe-uninitialized).
  LaunchOptions options;
  options.ranks = ranks;
  options.threads_per_rank = 1;
  options.program = {"PROGRAM"};
  std::vector<std::string> argv = launch_argv(options);
  argv.pop_back();  // the program: train_command's
  std::string line;
  for (const std::string& arg : argv) line += arg + " ";
  return line;
}

// The reference: one process, no sharding, the same data and seed (micro-batches of `micro`).
std::map<int64_t, nlohmann::json> one_rank_losses(int64_t micro) {
  const Fixture f = make_run("reference", kPlain, kCheckpoints, 10, micro, 8 / micro);
  const ChildResult r = sh("OMP_NUM_THREADS=1 " + train_command(f, "one"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return metrics(f, "one");
}

TEST(TrainCli, TwoRanksGiveOneRanksLosses) {
  if (this_host().mpirun.empty()) GTEST_SKIP() << "no mpirun in this build";
  const auto reference = one_rank_losses(/*micro=*/4);
  for (const std::string sharding : {"none", "zero_1", "zero_3"}) {
    const Fixture f =
        make_run("ranks_" + sharding, "sharding = \"" + sharding + "\"", kCheckpoints, 10);
    const ChildResult two = sh(mpirun(2) + train_command(f, "two"));
    ASSERT_EQ(two.exit_code, 0) << two.err;
    expect_same_losses(reference, metrics(f, "two"), 1e-5);
  }
}

TEST(TrainCli, ResumesOnTwoRanksFromAFourRankCheckpoint) {
  if (this_host().mpirun.empty()) GTEST_SKIP() << "no mpirun in this build";
  const auto reference = one_rank_losses(/*micro=*/2);
  for (const std::string sharding : {"none", "zero_2", "zero_3"}) {
    const Fixture f = make_run("reshard_" + sharding,
                               "sharding = \"" + sharding + "\"",
                               kCheckpoints,
                               10,
                               /*micro=*/2,
                               /*acc=*/1);
    // 4 ranks to step 10, the step-10 checkpoint dropped: 2 ranks resume from step 5.
    const ChildResult four = sh(mpirun(4) + train_command(f, "re"));
    ASSERT_EQ(four.exit_code, 0) << four.err;
    fs::remove_all(f.dir / "re/checkpoints/step-10");
    const ChildResult two = sh(mpirun(2) + train_command(f, "re", "--resume"));
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_NE(two.err.find("step-5"), std::string::npos) << two.err;
    EXPECT_NE(two.err.find("note: accumulating 2 micro-batches of 2 on 2 ranks to make the global "
                           "batch of 8\n"),
              std::string::npos)
        << two.err;
    expect_same_losses(reference, metrics(f, "re"), 1e-5);
  }
}

}  // namespace
}  // namespace gpudays
