// `gpudays data tokenize` stopped by SIGTERM (or SIGHUP: a closed ssh session) while it reads (a
// FIFO whose writer pauses, then goes: the signal is honoured between pieces): exit 128 + the
// signal, its line, no temporary file beside the outputs, and the earlier dataset of that prefix
// byte for byte as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_util.h"
#include "trainer/train_cli_util.h"
#include "workflow/workflow_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

void stop_tokenize_while_it_reads(const std::string& signal_name, int signal) {
  const fs::path dir = test::process_temp_dir().fresh_dir("stopped-data-" + signal_name);
  const std::string tokenize = std::string(GPUDAYS_BINARY) + " data tokenize --tokenizer " +
                               GPUDAYS_TEST_DATA_DIR + "/kjv-genesis-tokenizer.json --out " +
                               (dir / "ds").string() + " ";
  test::write_text(dir / "doc.txt", "In the beginning");
  ASSERT_EQ(test::sh(tokenize + (dir / "doc.txt").string()).exit_code, 0);
  const auto before = test::snapshot(dir);
  const std::string fifo = (dir / "fifo").string();
  const std::string opened = (dir / "opened").string();
  // The writer holds the FIFO open after its first words; `opened` exists once gpudays reads.
  const ChildResult r = test::sh("mkfifo " + fifo + "; (exec 2>/dev/null >/dev/null; exec 3>" +
                                 fifo + "; printf 'God created the heaven ' >&3; touch " + opened +
                                 "; exec sleep 30) & w=$!; " + tokenize + fifo +
                                 " & pid=$!; while [ ! -e " + opened + " ]; do sleep 0.05; done; " +
                                 "kill -" + signal_name + " $pid; sleep 0.2; kill $w; wait $pid");
  EXPECT_EQ(r.exit_code, 128 + signal) << signal_name << ": " << r.err;
  EXPECT_NE(r.err.find("gpudays: interrupted by signal " + std::to_string(signal) +
                       "; nothing was written"),
            std::string::npos)
      << r.err;
  test::expect_no_internal_error(r.err);
  fs::remove(fifo);
  fs::remove(opened);
  EXPECT_TRUE(test::snapshot(dir) == before) << signal_name << ": a file was left or changed";
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 3) << "doc.txt, ds.bin and ds.idx, nothing beside them";
}

TEST(Workflow, SigtermDuringTokenizeLeavesNothingBehind) {
  stop_tokenize_while_it_reads("TERM", 15);
  stop_tokenize_while_it_reads("HUP", 1);
}

}  // namespace
}  // namespace gpudays
