// `gpudays data tokenize` stopped by SIGTERM while it reads (a FIFO whose writer pauses, then goes:
// the signal is honoured between pieces): exit 143, its line, no temporary file beside the
// outputs, and the earlier dataset of that prefix byte for byte as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_util.h"
#include "trainer/train_cli_util.h"
#include "workflow/workflow_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

TEST(Workflow, SigtermDuringTokenizeLeavesNothingBehind) {
  const fs::path dir = test::process_temp_dir().fresh_dir("sigterm-data");
  const std::string tokenize = std::string(GPUDAYS_BINARY) + " data tokenize --tokenizer " +
                               GPUDAYS_TEST_DATA_DIR + "/kjv-genesis-tokenizer.json --out " +
                               (dir / "ds").string() + " ";
  test::write_text(dir / "doc.txt", "In the beginning");
  ASSERT_EQ(test::sh(tokenize + (dir / "doc.txt").string()).exit_code, 0);
  const auto before = test::snapshot(dir);
  const std::string fifo = (dir / "fifo").string();
  const std::string opened = (dir / "opened").string();
  // The writer holds the FIFO open after its first words; `opened` exists once gpudays reads.
  const ChildResult r =
      test::sh("mkfifo " + fifo + "; (exec 2>/dev/null >/dev/null; exec 3>" + fifo +
               "; printf 'God created the heaven ' >&3; touch " + opened +
               "; exec sleep 30) & w=$!; " + tokenize + fifo + " & pid=$!; while [ ! -e " + opened +
               " ]; do sleep 0.05; done; " + "kill -TERM $pid; sleep 0.2; kill $w; wait $pid");
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_NE(r.err.find("gpudays: interrupted by signal 15; nothing was written"), std::string::npos)
      << r.err;
  test::expect_no_internal_error(r.err);
  fs::remove(fifo);
  fs::remove(opened);
  EXPECT_TRUE(test::snapshot(dir) == before) << "a file was left or changed";
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 3) << "doc.txt, ds.bin and ds.idx, nothing beside them";
}

}  // namespace
}  // namespace gpudays
