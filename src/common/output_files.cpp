// Atomic output files and staged output directories.
#include "common/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace gpudays {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw IoError(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (fs::exists(path_, ec) && !fs::is_regular_file(path_, ec)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) fail("open", path_, errno);
    return;
  }
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  fd_ = ::mkstemp(temp.data());
  if (fd_ < 0) fail("create a file in", dir.string(), errno);
  temp_ = temp;
  // mkstemp makes it 0600; the file gets the mode an ordinary create would give it.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

// Every byte, retrying short writes.
void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::write(fd_, p + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", path_, n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
}

// fsync where the file supports it, close (whose error counts), rename into place.
void AtomicFile::commit() {
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) fail("flush", path_, errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close", path_, errno);
  if (temp_.empty()) return;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("replace", path_, errno);
  temp_.clear();
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  AtomicFile file(path);
  file.write(contents.data(), contents.size());
  file.commit();
}

StagedDirectory::StagedDirectory(std::string destination, bool replace)
    : destination_(std::move(destination)) {
  std::error_code ec;
  if (fs::exists(destination_, ec)) {
    if (!fs::is_directory(destination_, ec)) {
      throw InputError(fmt::format("{} exists and is not a directory", destination_));
    }
    if (!replace && !fs::is_empty(destination_, ec)) {
      throw InputError(
          fmt::format("{} is not empty; choose a new directory or pass --force to "
                      "replace it",
                      destination_));
    }
  }
  const fs::path target = fs::absolute(destination_, ec).lexically_normal();
  const fs::path parent = target.parent_path();
  fs::create_directories(parent, ec);
  std::string staging = (parent / ("." + target.filename().string() + ".staging.XXXXXX")).string();
  if (::mkdtemp(staging.data()) == nullptr) fail("create a directory in", parent.string(), errno);
  staging_ = staging;
}

StagedDirectory::~StagedDirectory() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void StagedDirectory::commit() {
  std::error_code ec;
  std::string old;
  if (fs::exists(destination_, ec)) {
    old = staging_ + ".old";
    if (::rename(destination_.c_str(), old.c_str()) != 0) fail("move aside", destination_, errno);
  }
  if (::rename(staging_.c_str(), destination_.c_str()) != 0) {
    const int error = errno;
    if (!old.empty()) ::rename(old.c_str(), destination_.c_str());  // put the old one back
    fail("move into place", destination_, error);
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

std::string absolute_path(const std::string& path) {
  return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace gpudays
