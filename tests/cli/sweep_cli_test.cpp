// `gpudays sweep` without running a trial: the shipped reference grid planned (--dry-run), a status
// without a database, and bad sweep files answered with one line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>

#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

const std::string kSweeps = std::string(GPUDAYS_TEST_DATA_DIR) + "/../../configs/sweeps/";

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Every cell listed with the planner's prediction; the A100's cells marked as this machine's.
TEST(SweepCli, DryRunListsEveryCellWithThePlannersPrediction) {
  const auto r =
      run_gpudays("sweep " + kSweeps + "reference-all-optimized.toml --dry-run --gpu a100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 145) << r.out;
  EXPECT_NE(r.out.find("   9 here pythia-160m on 1 x 1 a100-80gb-sxm, reference-optimized: 12 "
                       "method sets; planner: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("144 cells, 36 of them run here (GPU a100-80gb-sxm); strategy reference"),
            std::string::npos)
      << r.out;
}

// Nothing stored yet: said once, then every cell listed as to do (the reference's
// print-incomplete on a fresh start); no database file is made.
TEST(SweepCli, StatusWithoutADatabaseListsEveryCellToDo) {
  const std::string file = test::write_temp_file(
      "status.toml", "models = [\"pythia-160m\"]\ngpus = [\"a100\"]\ngpus_per_node = [1, 2]\n");
  const std::string db = test::fresh_path("none.db");
  const auto r = run_gpudays("sweep " + file + " --status --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no results database yet; nothing is done"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 cells: 0 done, 2 to do, 0 invalid"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(SweepCli, BadSweepFilesAreOneLineAndExit2) {
  for (const auto& [text, needle] : std::initializer_list<std::pair<std::string, std::string>>{
           {"models = [\"pythia-160m\"]\n", "gpus: missing"},
           {"models = [\"pythia-160m\"]\ngpus = [\"a100\"]\nstrategy = \"best\"\n",
            "strategy: unknown strategy 'best'"},
           {"models = [\"pythia-160m\"]\ngpus = [\"a100\"]\nnodes = [\"1\"]\n",
            "nodes: must be an array of integers"},
           // An alias and its catalog name: every cell would be listed (and run) twice.
           {"models = [\"pythia-160m\"]\ngpus = [\"a100\", \"a100-80gb-sxm\"]\n",
            "gpus: 'a100' and 'a100-80gb-sxm' are both a100-80gb-sxm; list it once"}}) {
    const std::string file = test::write_temp_file("bad.toml", text);
    const auto r = run_gpudays("sweep " + file + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("gpudays: error: " + file + ": " + needle), std::string::npos) << r.err;
  }
}

// --slurm: one script per GPU type in the cluster file's partition of that type; a GPU type the
// file has no partition for is refused before any script is written.
TEST(SweepCli, SlurmWritesOneScriptPerGpuTypeOrNoneAtAll) {
  const std::string cluster = std::string(GPUDAYS_TEST_DATA_DIR) + "/slurm-cluster.toml";
  const std::string file = test::write_temp_file(
      "slurm.toml", "models = [\"pythia-160m\"]\ngpus = [\"a100\"]\ngpus_per_node = [1, 2]\n");
  const std::string dir = test::fresh_path("sweep-slurm");
  const auto r = run_gpudays("sweep " + file + " --slurm --dry-run --cluster " + cluster +
                             " --slurm-dir " + dir + " --db " + test::fresh_path("s.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#SBATCH --partition=a100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#SBATCH --gres=gpu:2"), std::string::npos) << r.out;  // its largest cell
  EXPECT_NE(r.out.find("--gpu a100-80gb-sxm --max-nodes 1 --max-gpus-per-node 2"),
            std::string::npos)
      << r.out;
  const std::string two = test::write_temp_file(
      "slurm2.toml", "models = [\"pythia-160m\"]\ngpus = [\"a100\", \"rtx-3090\"]\n");
  const std::string dir2 = test::fresh_path("sweep-slurm2");
  const auto refused = run_gpudays("sweep " + two + " --slurm --dry-run --cluster " + cluster +
                                   " --slurm-dir " + dir2 + " --db " + test::fresh_path("s2.db"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(count_lines(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("partitions: none of GPU type rtx-3090"), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out.find("#SBATCH"), std::string::npos) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(dir2) && !std::filesystem::is_empty(dir2));
}

}  // namespace
}  // namespace gpudays
