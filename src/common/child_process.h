// Runs one command as a child process in its own process group with a time limit, capturing its
// standard output and error to files. A child (and everything it started) that outlives the limit
// is killed. RAII: a ChildProcess that is destroyed while running kills its group; the child dies
// with its parent (PR_SET_PDEATHSIG), also when the parent is killed with SIGKILL.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gpudays {

struct ChildResult {
  bool timed_out = false;
  bool signaled = false;
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // when it was killed by a signal
  double wall_s = 0.0;
  std::string out;  // standard output
  std::string err;  // standard error (last 64 KiB)
};

struct ChildOptions {
  double time_limit_s = 600.0;
  std::string work_dir;  // where the output files go (default: a temporary directory)
};

class ChildProcess {
 public:
  // Throws IoError when its output files cannot be made in the work directory.
  ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // Blocks until it exits or the time limit passes. Under an InterruptScope (common/interrupt.h),
  // a SIGINT/SIGTERM stops the child's whole group and throws Interrupted.
  ChildResult wait();

 private:
  void kill_group();
  void stop_group();
  void remove_outputs();
  pid_t pid_ = -1;
  ChildOptions options_;
  std::string out_path_;
  std::string err_path_;
};

// Convenience: run and wait.
ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options);

// The last non-blank line of a child's output (a trial's result, a failing program's error), its
// trailing blanks left out; "" when there is none.
std::string last_line(const std::string& text);

// The line of a failed child's stderr that says what went wrong: gpudays' own error line, else
// the first line naming an error (an uncaught exception's "what():", a CUDA or NCCL error), else
// the last line; never a backtrace's frame. "" when there is none.
std::string error_line(const std::string& text);

}  // namespace gpudays
