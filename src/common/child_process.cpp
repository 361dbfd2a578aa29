// ChildProcess: fork/exec with a process group, output files and a polling wait.
#include "common/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/interrupt.h"
#include "common/output_files.h"

namespace gpudays {
namespace {

constexpr size_t kMaxErrBytes = 64 * 1024;

std::string read_file(const std::string& path, size_t keep_last = 0) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (keep_last > 0 && s.size() > keep_last) s = s.substr(s.size() - keep_last);
  return s;
}

std::string unique_stem(const std::string& dir) {
  static std::atomic<int> counter{0};
  return (std::filesystem::path(dir) / fmt::format("child.{}.{}", getpid(), counter.fetch_add(1)))
      .string();
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options)
    : options_(options) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty command");
  std::error_code ec;
  const std::string dir = options.work_dir.empty()
                              ? std::filesystem::temp_directory_path(ec).string()
                              : options.work_dir;
  if (ec) throw IoError(fmt::format("no temporary directory (TMPDIR): {}", ec.message()));
  const std::string stem = unique_stem(dir);
  out_path_ = stem + ".out";
  err_path_ = stem + ".err";
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The output files are made here, where a failure is the caller's to report, not the child's.
  const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int error = errno;
  if (out < 0 || err < 0) {
    if (out >= 0) ::close(out);
    if (err >= 0) ::close(err);
    remove_outputs();
    throw IoError(fmt::format("cannot create a file in {}: {}", dir, std::strerror(error)));
  }
  pid_ = fork();
  if (pid_ < 0) {
    ::close(out);
    ::close(err);
    remove_outputs();
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    setpgid(0, 0);  // own group: the time limit kills the child and all it started
    // A parent that dies without cleaning up (SIGKILL) takes the child with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(127);  // the parent died before prctl
    const int in = ::open("/dev/null", O_RDONLY);
    if (in < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);  // dup2 clears close-on-exec on the copies
    dup2(err, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  ::close(out);
  ::close(err);
  setpgid(pid_, pid_);  // also from the parent, to avoid the race with the child's own call
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill_group();
    waitpid(pid_, nullptr, 0);
  }
  remove_outputs();
}

void ChildProcess::remove_outputs() {
  std::error_code ec;
  std::filesystem::remove(out_path_, ec);
  std::filesystem::remove(err_path_, ec);
}

void ChildProcess::kill_group() {
  ::kill(-pid_, SIGKILL);
}

// SIGTERM to the group, SIGKILL after kStopGrace_s, and reaped: a stopped trial leaves nothing.
void ChildProcess::stop_group() {
  constexpr double kStopGrace_s = 5.0;
  ::kill(-pid_, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kStopGrace_s);
  while (waitpid(pid_, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_group();
  waitpid(pid_, nullptr, 0);
}

ChildResult ChildProcess::wait() {
  ChildResult r;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(options_.time_limit_s);
  int status = 0;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (const int signal = interrupted()) {  // Ctrl-C or SIGTERM: stop the trial, then unwind
      stop_group();
      pid_ = -1;
      throw Interrupted(signal);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      kill_group();
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  kill_group();  // anything the child left running in its group
  pid_ = -1;
  // A signal that came with the child's end (a Slurm job cancelled: SIGTERM reaches the sweep and
  // the trial's step together, and the step may end first) stops the sweep all the same: the
  // child's result is what the signal did to it, not a measurement.
  if (const int signal = interrupted()) throw Interrupted(signal);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (!r.timed_out && WIFSIGNALED(status)) {
    r.signaled = true;
    r.signal = WTERMSIG(status);
  }
  r.out = read_file(out_path_);
  r.err = read_file(err_path_, kMaxErrBytes);
  return r;
}

ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options) {
  ChildProcess child(argv, options);
  return child.wait();
}

namespace {

std::vector<std::string> non_blank_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos) {
      line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
      lines.push_back(line);
    }
    begin = end + 1;
  }
  return lines;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool is_backtrace(const std::string& line) {
  return starts_with(line, "frame #") || starts_with(line, "Exception raised from") ||
         starts_with(line, "#");
}

// The first line that is not a frame and contains `needle`; "" when none does.
std::string first_with(const std::vector<std::string>& lines, const char* needle) {
  for (const std::string& line : lines) {
    if (!is_backtrace(line) && line.find(needle) != std::string::npos) return line;
  }
  return "";
}

}  // namespace

std::string error_line(const std::string& text) {
  const std::vector<std::string> lines = non_blank_lines(text);
  for (const std::string& line : lines) {
    if (starts_with(line, "gpudays: error:") || starts_with(line, "gpudays: internal error:")) {
      return line;
    }
  }
  for (const char* needle : {"what():", "rror"}) {
    if (std::string line = first_with(lines, needle); !line.empty()) return line;
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!is_backtrace(*it)) return *it;
  }
  return "";
}

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  const size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

}  // namespace gpudays
