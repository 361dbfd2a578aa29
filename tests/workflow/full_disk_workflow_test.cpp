// A full disk (/dev/full) under every output a command writes: standard output of each command
// that prints, export's --out, a dataset's .bin (a link to /dev/full beside the earlier .idx) and
// train's metrics.jsonl. Each ends in one line and exit 1, never exit 0 with a truncated file, and
// what was there before is as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "results/results_db.h"
#include "test_util.h"
#include "trainer/train_cli_util.h"
#include "workflow/workflow_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

ChildResult gpudays_to(const std::string& args, const std::string& redirect) {
  return test::sh(std::string(GPUDAYS_BINARY) + " " + args + " " + redirect);
}

TEST(Workflow, FullDiskIsOneLineForEveryOutput) {
  const std::string db = test::fresh_path("full.db");
  ResultsDb::open({db, /*read_only=*/false, &test::catalog()})
      .insert(test::pythia_1b_trial(1, 20.0, 20.0));
  const std::string data = std::string(GPUDAYS_TEST_DATA_DIR);
  const std::string tokenizer = data + "/kjv-genesis-tokenizer.json";
  const std::string prefix = test::fresh_path("genesis");
  ASSERT_EQ(test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " + prefix + " " +
                              data + "/kjv-genesis.jsonl")
                .exit_code,
            0);
  const std::string cluster = " --model pythia-1b --gpu a100 --gpus-per-node 4";
  const std::vector<std::string> printing = {"plan" + cluster,
                                             "cost --model pythia-1b --gpus a100 --counts 4",
                                             "models",
                                             "gpus",
                                             "paper",
                                             "fit --gpu a100 --gpus 4 --days 30",
                                             "validate",
                                             "export" + cluster + " --source plan --format toml",
                                             "results --db " + db,
                                             "best" + cluster + " --db " + db,
                                             "data inspect " + prefix + " --seq-len 16"};
  for (const std::string& args : printing) {
    const ChildResult r = gpudays_to(args, "> /dev/full");
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    test::expect_one_error_line(r.err, {"cannot write standard output"});
  }
  const ChildResult out = gpudays_to("export" + cluster + " --source plan --out /dev/full", "");
  EXPECT_EQ(out.exit_code, 1) << out.err;
  test::expect_one_error_line(out.err, {"cannot write /dev/full: No space left on device"});

  // A dataset's .bin on a full disk: the earlier .idx of that prefix is kept, nothing beside it.
  const std::string idx = test::read_file(prefix + ".idx");
  fs::remove(prefix + ".bin");
  fs::create_symlink("/dev/full", prefix + ".bin");
  const auto tokenized = test::run_gpudays("data tokenize --tokenizer " + tokenizer + " --out " +
                                           prefix + " " + tokenizer);
  EXPECT_EQ(tokenized.exit_code, 1) << tokenized.err;
  test::expect_one_error_line(tokenized.err, {".bin: No space left on device"});
  EXPECT_EQ(test::read_file(prefix + ".idx"), idx);
}

// train's metrics.jsonl on a full disk (a link to /dev/full, which also never ends when read).
TEST(Workflow, TrainMetricsOnAFullDiskIsOneLine) {
  if (!test::gpudays_trains()) GTEST_SKIP() << "this gpudays was built without LibTorch";
  const test::Fixture f = test::make_run("full", "sharding = \"none\"", "", 10);
  fs::create_directories(f.dir / "out");
  fs::create_symlink("/dev/full", f.dir / "out/metrics.jsonl");
  const ChildResult r = test::sh("ulimit -v 16000000; " + test::train_command(f, "out"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  test::expect_one_error_line(r.err, {"metrics.jsonl: write failed"});
}

}  // namespace
}  // namespace gpudays
