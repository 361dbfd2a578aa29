// One run per run directory, as a user meets it: `train` into a directory that holds a run without
// --resume is refused and the run is kept byte for byte; a second `train` on a directory another
// one is writing is refused naming the holder, the first's files untouched; a rank that never
// arrives and a model too large for the host end in one line, not a stack trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_util.h"
#include "trainer/train_cli_util.h"
#include "workflow/workflow_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

const std::string kPlain = "sharding = \"none\"";
const std::string kCheckpoints = "checkpoint_interval = 5\nkeep_checkpoints = 3";

TEST(Workflow, ARunDirectoryIsReusedOnlyWithResume) {
  const test::Fixture f = test::make_run("reuse", kPlain, kCheckpoints, 10);
  ASSERT_EQ(test::sh(test::train_command(f, "out")).exit_code, 0);
  const auto before = test::snapshot(f.dir / "out");
  const ChildResult again = test::sh(test::train_command(f, "out"));
  EXPECT_EQ(again.exit_code, 2) << again.err;
  test::expect_one_error_line(again.err,
                              {(f.dir / "out").string(),
                               "holds a run (metrics.jsonl and 2 checkpoint(s)): continue it "
                               "with --resume"});
  EXPECT_TRUE(test::snapshot(f.dir / "out") == before) << "the earlier run changed";
}

// Trainer A stalls while writing its step-5 checkpoint (the test-only hook); trainer B on the same
// --out is refused naming A's PID, and A's files are as A left them (copied aside before B).
// One shell runs it all: the test's child processes end with their shell.
TEST(Workflow, TwoTrainersOnOneDirectoryTheSecondIsRefused) {
  const test::Fixture f = test::make_run("two", kPlain, kCheckpoints, 10);
  const std::string dir = f.dir.string();
  const ChildResult b =
      test::sh("GPUDAYS_TEST_STALL_CHECKPOINT=5 " + test::train_command(f, "out") + " 2>" + dir +
               "/a.err & pid=$!; echo $pid > " + dir + "/a.pid; for i in $(seq 600); do grep -q " +
               "'stalled writing checkpoint step-5' " + dir +
               "/a.err && break; sleep 0.05; done; cp -r " + dir + "/out " + dir + "/before; " +
               test::train_command(f, "out", "--resume") + "; rc=$?; kill -9 $pid; exit $rc");
  std::string pid = test::read_file(dir + "/a.pid");
  pid.erase(pid.find_last_not_of('\n') + 1);
  EXPECT_EQ(b.exit_code, 2) << b.err;
  test::expect_one_error_line(
      b.err, {(f.dir / "out").string(), "is in use by another gpudays train (pid " + pid});
  EXPECT_TRUE(test::snapshot(f.dir / "out") == test::snapshot(f.dir / "before"))
      << "the second trainer wrote";
  EXPECT_TRUE(fs::exists(f.dir / "out/checkpoints/.step-5.tmp/model.safetensors"))
      << "A did not stall mid-checkpoint";
}

// Rank 0 of a two-rank launch whose rank 1 never starts: one line naming the store, exit 1.
TEST(Workflow, ARankThatNeverArrivesIsOneLine) {
  const test::Fixture f = test::make_run("alone", kPlain, kCheckpoints, 10);
  const ChildResult r = test::sh(
      "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((20000 + $$ % 20000)) "
      "GPUDAYS_RENDEZVOUS_TIMEOUT_S=1 " +
      test::train_command(f, "out"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  test::expect_one_error_line(r.err, {"rank 0: 1 of 2 ranks arrived at 127.0.0.1:", "within 1 s"});
}

// A model whose weights, gradients and moments cannot fit the host: refused before it is built.
TEST(Workflow, AModelTooLargeForTheHostIsOneLine) {
  test::Fixture f = test::make_run("huge", kPlain, kCheckpoints, 10);
  std::string model = test::read_file((f.dir / "tiny.toml").string());
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"d_model = 32", "d_model = 65536"},
        {"d_ffn = 64", "d_ffn = 262144"},
        {"n_layers = 2", "n_layers = 512"}}) {
    model.replace(model.find(from), from.size(), to);
  }
  test::write_text(f.dir / "tiny.toml", model);
  const ChildResult r = test::sh("ulimit -v 16000000; " + test::train_command(f, "out"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  test::expect_one_error_line(r.err, {"tiny-gpt-neox has", "GiB of host memory, more than the"});
}

}  // namespace
}  // namespace gpudays
