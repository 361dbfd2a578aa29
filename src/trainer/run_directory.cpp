// The run directory's claim: refuse another run's directory without --resume, lock it for one
// process.
#include "trainer/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output_files.h"

namespace gpudays {
namespace {

namespace fs = std::filesystem;

std::string this_host() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("?");
}

std::string read_holder(const fs::path& lock) {
  std::ifstream in(lock);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text.empty() ? "a process that has not written its name yet" : text;
}

}  // namespace

std::string earlier_run(const std::string& out) {
  std::error_code ec;
  std::string what;
  if (fs::file_size(fs::path(out) / "metrics.jsonl", ec) > 0 && !ec) what = "metrics.jsonl";
  int checkpoints = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(out) / "checkpoints", ec)) {
    if (entry.path().filename().string().rfind("step-", 0) == 0) ++checkpoints;
  }
  if (checkpoints > 0) {
    what += fmt::format("{}{} checkpoint(s)", what.empty() ? "" : " and ", checkpoints);
  }
  return what;
}

RunDirectoryClaim::RunDirectoryClaim(const std::string& out, bool resume) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw IoError(fmt::format("cannot create {}: {}", out, ec.message()));
  const fs::path lock = fs::path(out) / ".gpudays-train.lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw IoError(fmt::format("cannot open {}: {}", lock.string(), std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string holder = read_holder(lock);
    ::close(fd_);
    fd_ = -1;
    throw InputError(
        fmt::format("{} is in use by another gpudays train ({}); give another --out", out, holder));
  }
  if (const std::string earlier = earlier_run(out); !resume && !earlier.empty()) {
    ::close(fd_);
    fd_ = -1;
    throw InputError(fmt::format(
        "{} holds a run ({}): continue it with --resume, or give another --out", out, earlier));
  }
  const std::string holder = fmt::format("pid {} on {}\n", ::getpid(), this_host());
  if (::ftruncate(fd_, 0) != 0 || ::write(fd_, holder.data(), holder.size()) < 0) {
    // The lock holds regardless; the name is only for the message of a second train.
  }
}

RunDirectoryClaim::~RunDirectoryClaim() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace gpudays
