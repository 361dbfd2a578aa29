// Sweep files: the shipped reference grids parse into the reference's cells, and every kind of bad
// input is one line naming the file and the key.
#include <gtest/gtest.h>

#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "sweep/sweep_grid.h"
#include "test_util.h"

namespace gpudays {
namespace {

const std::string kSweeps = std::string(GPUDAYS_TEST_DATA_DIR) + "/../../configs/sweeps/";

TEST(SweepGrid, TheReferenceGridsAreItsNineModelsFourGpusAndFourCounts) {
  for (const char* name : {"reference-all-naive.toml", "reference-all-optimized.toml"}) {
    const SweepGrid g = load_sweep_grid(kSweeps + name, test::catalog());
    EXPECT_EQ(g.models.size(), 9u);
    EXPECT_EQ(g.gpus,
              (std::vector<std::string>{"rtx-3090", "rtx-a6000", "a100-80gb-sxm", "h100-sxm"}));
    EXPECT_EQ(g.gpus_per_node, (std::vector<int64_t>{1, 2, 4, 8}));
    EXPECT_EQ(g.strategy, "reference");
    const std::vector<SweepCell> cells = sweep_cells(g);
    ASSERT_EQ(cells.size(), 144u);
    EXPECT_EQ(cells.front().describe(),
              fmt::format("pythia-160m on 1 x 1 rtx-3090, {}", g.methods.front()));
    const BenchRequest r = cell_request(g, cells[5], BenchRequest{});
    EXPECT_EQ(r.gpu, "rtx-a6000");
    EXPECT_EQ(r.gpus_per_node, 2);
    EXPECT_EQ(r.strategy, "reference");
  }
}

// reference-optimized is the all preset with free-lunch pinned on: 12 method sets on one GPU and
// 22 on more, as the reference's all_optimized.json makes them.
TEST(SweepGrid, ReferenceOptimizedIsTwelveMethodSetsOnOneGpuAndTwentyTwoOnMore) {
  const MethodSelection s = parse_method_selection("reference-optimized");
  for (const auto& [gpus, expected] : {std::pair<int64_t, size_t>{1, 12}, {2, 22}, {8, 22}}) {
    const Cluster cluster{{1, gpus}, &test::catalog().gpu("a100")};
    size_t sets = 0;
    for (const MethodSet& m : enumerate_method_sets(s.preset, cluster)) {
      sets += s.pin.matches(Configuration{m, 1, 1}) ? 1 : 0;
    }
    EXPECT_EQ(sets, expected) << gpus << " GPUs";
  }
  EXPECT_EQ(parse_method_selection("reference-naive"), (MethodSelection{MethodPreset::kNaive, {}}));
}

std::string load_error(const std::string& text) {
  const std::string path = test::write_temp_file("bad-sweep.toml", text);
  try {
    load_sweep_grid(path, test::catalog());
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();  // "FILE: key: ..."
    return std::string(e.what()).substr(path.size());
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(SweepGrid, BadInputIsOneLineNamingTheFileAndKey) {
  const std::string ok = "models = [\"pythia-160m\"]\ngpus = [\"a100\"]\n";
  const std::pair<std::string, std::string> cases[] = {
      {"gpus = [\"a100\"]\n", "models: missing"},
      {"models = [\"gpt-5\"]\ngpus = [\"a100\"]\n", "models: unknown model 'gpt-5'"},
      {"models = [\"pythia-160m\"]\n", "gpus: missing"},
      {"models = [\"pythia-160m\"]\ngpus = [\"tpu\"]\n", "gpus: unknown GPU 'tpu'"},
      {"models = \"pythia-160m\"\ngpus = [\"a100\"]\n", "models: must be an array of strings"},
      {ok + "gpus_per_node = [0]\n", "gpus_per_node: 0 is not in [1, 64]"},
      {ok + "gpus_per_node = []\n", "gpus_per_node: an empty list"},
      {ok + "methods = [\"fast\"]\n", "methods: unknown method sets 'fast'"},
      {ok + "strategy = \"fastest\"\n", "strategy: unknown strategy 'fastest'"},
      {ok + "steps = 2\n", "steps: 2 is not in [3, 1000]"},
      {ok + "memory_limit = 5\n", "memory_limit: neither 0"},
      {ok + "model = [\"x\"]\n", "model: unknown key (see docs/sweep.md)"},
      {ok + "[pin]\nsharding = \"zero_9\"\n", "sharding: unknown sharding 'zero_9'"},
      {ok + "[pin]\nfree_lunch = \"yes\"\n", "free_lunch: must be true or false"},
      {ok + "methods = [\"reference-optimized\"]\n[pin]\nfree_lunch = false\n",
       "pin: [pin] pins free-lunch off, which contradicts methods reference-optimized"},
      {"models = [\"pythia-160m\"\n", ":1:25: "},  // a syntax error: its line and column
      // One entry twice, also as an alias and its catalog name, would run each cell twice.
      {"models = [\"pythia-160m\"]\ngpus = [\"a100\", \"a100-80gb-sxm\"]\n",
       "gpus: 'a100' and 'a100-80gb-sxm' are both a100-80gb-sxm; list it once"},
      {"models = [\"pythia-160m\", \"EleutherAI/pythia-160m\"]\ngpus = [\"a100\"]\n",
       "models: 'pythia-160m' and 'EleutherAI/pythia-160m' are both pythia-160m"},
      {ok + "nodes = [1, 2, 1]\n", "nodes: '1' and '1' are both 1; list it once"},
      {ok + "methods = [\"all\", \"all\"]\n", "methods: 'all' and 'all' are both all"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string error = load_error(text);
    EXPECT_NE(error.find(expected), std::string::npos) << "got: " << error;
  }
  // A [pin] value of the wrong type names its file, table and key once.
  const std::string error = load_error(ok + "[pin]\nfree_lunch = \"yes\"\n");
  EXPECT_EQ(error.find("free_lunch"), error.rfind("free_lunch")) << error;
}

}  // namespace
}  // namespace gpudays
