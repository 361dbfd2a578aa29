// Child processes: output captured, exit codes and signals reported, hangs killed at the limit
// together with the processes they started.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <signal.h>

#include "common/child_process.h"
#include "common/interrupt.h"

namespace gpudays {
namespace {

ChildResult sh(const std::string& script, double limit_s = 10.0) {
  return run_child({"/bin/sh", "-c", script}, ChildOptions{limit_s, ""});
}

TEST(ChildProcess, CapturesOutputAndExitCode) {
  const ChildResult r = sh("echo '{\"ok\": true}'; echo oops >&2; exit 3");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "{\"ok\": true}\n");
  EXPECT_EQ(r.err, "oops\n");
}

TEST(ChildProcess, ReportsACrash) {
  const ChildResult r = sh("kill -SEGV $$");
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, SIGSEGV);
}

TEST(ChildProcess, KillsAHangAndWhatItStartedAtTheLimit) {
  const ChildResult r = sh("sleep 31.7 & sleep 31.7", /*limit_s=*/0.3);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_s, 5.0);
  // The background sleep was in the child's group and was killed with it: nothing survives (a
  // SIGKILL is delivered asynchronously: allow a loaded machine up to 2 s to finish it).
  ChildResult check;
  for (int i = 0; i < 20; ++i) {
    check = sh("pgrep -f 'slee[p] 31.7' || true");
    if (check.out.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(check.out, "");
}

// scancel signals the sweep and its trial's srun step together; a step that ends first must not
// have its end recorded as the trial's result.
TEST(ChildProcess, ASignalThatCameWithTheChildsEndInterruptsTheWait) {
  const InterruptScope scope;
  try {
    sh("sleep 0.3; kill -TERM $PPID; exit 3");  // between two of the wait's 50 ms polls
    FAIL() << "the child's exit was returned as a result";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
  }
}

TEST(ChildProcess, MissingProgramExits127) {
  const ChildResult r = run_child({"/nonexistent/program"}, ChildOptions{});
  EXPECT_EQ(r.exit_code, 127);
}

}  // namespace
}  // namespace gpudays
