// Atomic output files and staged output directories.
#include "common/output_files.h"

#include <fcntl.h>
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

// Writes every byte to `fd`, retrying short writes; fsync where the file supports it.
void write_all(int fd, const std::string& contents, const std::string& path) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", path, n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) fail("flush", path, errno);
}

void write_in_place(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail("open", path, errno);
  try {
    write_all(fd, contents, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail("close", path, errno);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& contents) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    write_in_place(path, contents);
    return;
  }
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail("create a file in", dir.string(), errno);
  try {
    write_all(fd, contents, path);
    if (::close(fd) != 0) fail("close", path, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) fail("replace", path, errno);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
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

}  // namespace gpudays
