// Atomic output files and staged output directories.
#include "common/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

// A file the process may not write is not replaced behind its protection (a rename needs only the
// directory's permission): refused where the process lacks write permission, and as root (who has
// it always) where the file has no write bit at all.
void refuse_write_protected(const std::string& path, mode_t mode) {
  const bool protected_file = ::geteuid() == 0
                                  ? (mode & 0222) == 0
                                  : ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0 &&
                                        (errno == EACCES || errno == EPERM);
  if (!protected_file) return;
  throw IoError(
      fmt::format("cannot replace {}: {} (mode {:04o}); make it writable or choose another file",
                  path,
                  (mode & 0222) == 0 ? "it is write-protected" : "this user may not write it",
                  mode & 07777));
}

// The process's file-creation mask (read by setting it and putting it back).
mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// The path with the links that exist resolved, absolute.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  if (ec) return absolute;
  if (!canonical.has_filename() && canonical.has_parent_path()) canonical = canonical.parent_path();
  return canonical;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  struct stat existing {};
  const bool exists = ::stat(path_.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) fail("open", path_, errno);
    return;
  }
  if (exists) refuse_write_protected(path_, existing.st_mode);
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (dir / fmt::format(".{}.XXXXXX", target.filename().string())).string();
  fd_ = ::mkstemp(temp.data());
  if (fd_ < 0) fail("create a file in", dir.string(), errno);
  temp_ = temp;
  // mkstemp makes it 0600; the file gets the mode of the file it replaces, else the mode an
  // ordinary create would give it.
  const mode_t mask = current_umask();
  ::fchmod(fd_, exists ? existing.st_mode & 0777 : 0666 & ~mask);
  // Root replacing another user's file gives it back to that user, who could read it before.
  if (exists && ::geteuid() == 0 && existing.st_uid != 0) {
    if (::fchown(fd_, existing.st_uid, existing.st_gid) != 0) {
      ::fchmod(fd_, 0666 & ~mask);  // not theirs any more: at least readable as a new file is
    }
  }
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

namespace {

// "out/" and "out" are one directory: the staging directory goes beside it, not inside.
std::string without_trailing_separators(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

StagedDirectory::StagedDirectory(std::string destination, bool replace)
    : destination_(without_trailing_separators(std::move(destination))) {
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
  std::string staging =
      (parent / fmt::format(".{}.staging.XXXXXX", target.filename().string())).string();
  if (::mkdtemp(staging.data()) == nullptr) fail("create a directory in", parent.string(), errno);
  // mkdtemp makes it 0700; the directory it becomes is shared as any other the user makes.
  const mode_t mask = current_umask();
  ::chmod(staging.c_str(), 0777 & ~mask);
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

void check_output_name(const std::string& path, const std::string& flag) {
  if (path.empty()) throw InputError(fmt::format("{} is empty; name the file to write", flag));
  const std::string name = fs::path(path).filename().string();
  if (name.empty() || name == "." || name == "..") {
    throw InputError(fmt::format("{} {} names a directory; give a file name", flag, path));
  }
}

void check_output_file(const std::string& path, const std::string& flag) {
  check_output_name(path, flag);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw InputError(fmt::format("{} {} is a directory; give a file name", flag, path));
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  return resolved(a) == resolved(b);
}

bool inside_directory(const std::string& path, const std::string& dir) {
  const fs::path d = resolved(dir), p = resolved(path);
  return std::mismatch(d.begin(), d.end(), p.begin(), p.end()).first == d.end();
}

void refuse_output_over_inputs(const std::string& output,
                               const std::vector<std::string>& inputs,
                               const std::string& flag) {
  for (const std::string& input : inputs) {
    if (!input.empty() && same_file(output, input)) {
      throw InputError(fmt::format(
          "{} is an input and an output ({} {}); choose another output", input, flag, output));
    }
  }
}

}  // namespace gpudays
