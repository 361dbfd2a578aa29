// `gpudays train` end to end on the CPU with a tiny GPT-NeoX on token data of known entropy: the
// held-out loss falls well below the unigram entropy; a run killed with SIGKILL at random points
// (checkpoint writes included) and resumed gives the uninterrupted run's loss curve exactly; a
// corrupted newest checkpoint is skipped for the previous one; SIGTERM checkpoints and exits 143;
// two ranks under mpirun give one rank's losses, and a run resumes on 2 ranks from 4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "../process_dir.h"
#include "common/child_process.h"
#include "distributed/launcher.h"
#include "models/safetensors.h"
#include "train_cli_util.h"
#include "trainer/checkpoint_files.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kVocab = 64;

using test::expect_same_losses;
using test::sh;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Tokens of a Markov chain: next = (7 * previous + b) mod 64 with b in {0, 1} equally likely:
// 1 bit (0.693 nats) per token once the previous token is seen, about ln 64 = 4.16 without it.
// Returns the unigram entropy of what was written, in nats.
double write_tokens(const fs::path& path, int64_t count) {
  std::mt19937 rng(5);
  std::vector<uint16_t> tokens(static_cast<size_t>(count));
  uint16_t t = 1;
  std::map<uint16_t, int64_t> freq;
  for (uint16_t& x : tokens) {
    t = static_cast<uint16_t>((7 * t + rng() % 2) % kVocab);
    x = t;
    ++freq[t];
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(count * 2));
  double h = 0.0;
  for (const auto& [token, n] : freq) {
    const double p = static_cast<double>(n) / static_cast<double>(count);
    h -= p * std::log(p);
  }
  return h;
}

struct Fixture {
  fs::path dir;
  std::string data;
  double unigram_nats = 0.0;
};

// A run directory: the tiny model, token data and a run file with `extra` appended to [train].
Fixture make_run(const std::string& name,
                 const std::string& methods,
                 const std::string& train,
                 int64_t steps,
                 int64_t micro = 4,
                 int64_t acc = 2) {
  Fixture f;
  f.dir = test::process_temp_dir().fresh_dir(name);
  write_text(f.dir / "tiny.toml", R"(name = "tiny-gpt-neox"
family = "gpt_neox"
[arch]
n_layers = 2
d_model = 32
n_heads = 2
d_ffn = 64
vocab_size = 64
seq_len = 16
max_position_embeddings = 16
rotary_pct = 0.25
[recipe]
global_batch = 8
train_steps = 1000
precision = "fp32"
optimizer = "adamw"
lr = 0.003
schedule = "cosine"
warmup_steps = 5
min_lr = 0.0003
)");
  write_text(f.dir / "run.toml",
             "model_file = \"tiny.toml\"\ngpu = \"cpu\"\nnum_nodes = 1\ngpus_per_node = 1\n"
             "[methods]\n" +
                 methods + "\n[batch]\nglobal_batch = 8\nmicro_batch_size = " +
                 std::to_string(micro) + "\ngrad_acc_steps = " + std::to_string(acc) +
                 "\n[schedule]\nsteps = " + std::to_string(steps) +
                 "\nclip_grad_norm = 1.0\n[train]\nseed = 7\n" + train +
                 "\n[data]\neval_fraction = 0.02\n");
  f.data = (f.dir / "tokens.u16").string();
  f.unigram_nats = write_tokens(f.data, 24000);
  return f;
}

std::string train_command(const Fixture& f, const std::string& out, const std::string& extra = "") {
  return std::string(GPUDAYS_BINARY) + " train --config " + (f.dir / "run.toml").string() +
         " --data " + f.data + " --out " + (f.dir / out).string() + " " + extra;
}

std::map<int64_t, nlohmann::json> metrics(const Fixture& f, const std::string& out) {
  return test::read_metrics(f.dir / out);
}

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

TEST(TrainCli, CorruptedNewestCheckpointFallsBackToThePreviousOne) {
  const Fixture f = make_run("corrupt", kPlain, kCheckpoints, 20);
  ASSERT_EQ(sh(train_command(f, "whole")).exit_code, 0);
  ASSERT_EQ(sh("cp -r " + (f.dir / "whole").string() + " " + (f.dir / "cut").string()).exit_code,
            0);
  // The newest checkpoint's weights truncated: the run resumes from step 15 and ends the same.
  fs::resize_file(f.dir / "cut/checkpoints/step-20/model.safetensors", 100);
  const ChildResult r = sh(train_command(f, "cut", "--resume"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("step-20: model.safetensors fails its checksum"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("resumed from"), std::string::npos);
  EXPECT_NE(r.err.find("step-15"), std::string::npos);
  expect_same_losses(metrics(f, "whole"), metrics(f, "cut"), 0.0);
}

// Rewrites the checkpoint's rank-0 optimizer file through `edit` and its manifest checksum (as a
// careless tool would, so that only the contents can tell).
void tamper_rank0(
    const fs::path& step_dir,
    const std::function<void(models::NamedTensors&, std::map<std::string, std::string>&)>& edit) {
  const std::string path = (step_dir / "rank-0.safetensors").string();
  models::NamedTensors tensors;
  std::map<std::string, std::string> metadata;
  {
    const models::SafetensorsReader reader(path);
    for (const auto& [name, entry] : reader.entries())
      tensors.emplace_back(name, reader.read(name));
    metadata = reader.metadata();
  }
  metadata.erase("format");
  edit(tensors, metadata);
  models::write_safetensors(path, tensors, metadata);
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(step_dir / "manifest.json"));
  manifest["files"]["rank-0.safetensors"] = file_checksum(path);
  std::ofstream(step_dir / "manifest.json") << manifest.dump();
}

// Optimizer state that does not cover its slot (a shortened moment, or one whose piece starts
// elsewhere) ends --resume with one line naming the tensor, exit 2, never a zero-filled moment.
TEST(TrainCli, ResumeRefusesOptimizerStateThatDoesNotCoverItsSlot) {
  const Fixture f = make_run("tamper", kPlain, kCheckpoints, 10);
  ASSERT_EQ(sh(train_command(f, "whole")).exit_code, 0);
  const auto tampered = [&](const std::string& out, const auto& edit) {
    fs::copy(f.dir / "whole", f.dir / out, fs::copy_options::recursive);
    fs::remove_all(f.dir / out / "checkpoints/step-10");
    tamper_rank0(f.dir / out / "checkpoints/step-5", edit);
    return sh(train_command(f, out, "--resume"));
  };
  const ChildResult shortened = tampered("short", [](models::NamedTensors& t, auto&) {
    for (auto& [name, tensor] : t) {
      if (name == "slot.0.exp_avg") tensor = tensor.reshape(-1).narrow(0, 0, tensor.numel() / 2);
    }
  });
  EXPECT_EQ(shortened.exit_code, 2) << shortened.err;
  EXPECT_NE(shortened.err.find("optimizer state slot.0.exp_avg lacks elements"), std::string::npos)
      << shortened.err;
  const ChildResult offset = tampered(
      "offset", [](auto&, std::map<std::string, std::string>& m) { m["slot.1.first"] = "3"; });
  EXPECT_EQ(offset.exit_code, 2) << offset.err;
  EXPECT_NE(offset.err.find("tensor slot.1.exp_avg: 32 elements from element 3 lie outside"),
            std::string::npos)
      << offset.err;
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
    expect_same_losses(reference, metrics(f, "re"), 1e-5);
  }
}

}  // namespace
}  // namespace gpudays
