// gnuplot child process: posix_spawn with the working directory and log redirection, a wait with
// a time limit, and an RAII guard that kills and reaps the child if anything throws.
#include "report/gnuplot.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"

extern char** environ;

namespace gpudays {
namespace fs = std::filesystem;
namespace {

// Owns a running child, the leader of its own process group: kills the whole group (a wrapper
// script's children too) and reaps the child unless wait() has collected it.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // The exit status, or nullopt when the time limit passed first or the log grew past
  // max_log_bytes (`log_overflowed` says which; the destructor then kills the group). A child that
  // exits leaves nothing of its group behind. Throws Interrupted on SIGINT/SIGTERM (within an
  // InterruptScope); the destructor kills the group.
  std::optional<int> wait(double timeout_s,
                          const fs::path& log_path,
                          std::uintmax_t max_log_bytes) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      throw_if_interrupted();
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        ::kill(-pid_, SIGKILL);  // whatever it started and left running
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (done < 0) throw std::runtime_error("waitpid on gnuplot failed");
      std::error_code ec;
      const std::uintmax_t bytes = fs::file_size(log_path, ec);
      if (!ec && bytes > max_log_bytes) {
        log_overflowed = true;
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::nullopt;
  }

  bool log_overflowed = false;

 private:
  pid_t pid_;
};

// Owns posix_spawn attributes.
class SpawnAttributes {
 public:
  SpawnAttributes() { posix_spawnattr_init(&attributes_); }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

// Owns posix_spawn file actions.
class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

std::string first_error_line(const fs::path& log_path) {
  std::ifstream in(log_path);
  std::string line, first_nonempty;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t^") == std::string::npos) continue;
    if (line.find("error") != std::string::npos) return line;
    if (first_nonempty.empty()) first_nonempty = line;
  }
  return first_nonempty.empty() ? "no output" : first_nonempty;
}

}  // namespace

std::string find_executable(const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos) {  // absolute: gnuplot runs in another folder
    return ::access(name_or_path.c_str(), X_OK) == 0 ? fs::absolute(name_or_path).string() : "";
  }
  const char* path_env = std::getenv("PATH");
  std::string paths = path_env != nullptr ? path_env : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= paths.size()) {
    const size_t end = std::min(paths.find(':', start), paths.size());
    const fs::path candidate = fs::path(paths.substr(start, end - start)) / name_or_path;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

std::string require_gnuplot(const GnuplotOptions& options) {
  const std::string path = find_executable(options.executable);
  if (path.empty()) {
    throw EnvironmentError(fmt::format(
        "gnuplot ('{}') not found: the report draws its plots with it; install it (Debian: "
        "apt-get install gnuplot-nox, which `make` does) or pass --gnuplot PATH",
        options.executable));
  }
  return path;
}

void run_gnuplot(const std::string& script_name,
                 const std::string& log_name,
                 const std::string& work_dir,
                 const GnuplotOptions& options) {
  const std::string executable = require_gnuplot(options);
  const fs::path log_path = fs::path(work_dir) / log_name;
  SpawnActions actions;
  posix_spawn_file_actions_addchdir_np(actions.get(), work_dir.c_str());
  posix_spawn_file_actions_addopen(
      actions.get(), STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO);
  std::vector<std::string> args = {executable, script_name};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Its own process group, so that everything it starts can be stopped with it.
  SpawnAttributes attributes;
  posix_spawnattr_setflags(attributes.get(), POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(attributes.get(), 0);
  pid_t pid = 0;
  if (const int rc = posix_spawn(
          &pid, executable.c_str(), actions.get(), attributes.get(), argv.data(), environ);
      rc != 0) {
    throw EnvironmentError(fmt::format("cannot start {}: {}", executable, std::strerror(rc)));
  }
  ChildProcess child(pid);
  // A log is a few kilobytes; a program that floods it (not a gnuplot) is stopped at this.
  constexpr std::uintmax_t kMaxLogBytes = 16u << 20;
  const std::optional<int> status = child.wait(options.timeout_s, log_path, kMaxLogBytes);
  throw_if_interrupted();  // an interruption as it ended outranks its result
  // The messages name the script, not the work directory: a staging directory is removed.
  if (child.log_overflowed) {
    throw EnvironmentError(fmt::format(
        "{} wrote more than {} MiB of output on {} and was stopped: is --gnuplot a gnuplot?",
        executable,
        kMaxLogBytes >> 20,
        script_name));
  }
  if (!status) {
    throw EnvironmentError(
        fmt::format("{} ran past {:g} s on {}", executable, options.timeout_s, script_name));
  }
  if (*status != 0) {
    throw EnvironmentError(fmt::format("{} failed on {} (exit {}): {}",
                                       executable,
                                       script_name,
                                       *status,
                                       first_error_line(log_path)));
  }
}

}  // namespace gpudays
