// Output files that are either written whole or not at all: a file goes to a temporary name in
// its directory, is flushed to disk (fsync) and renamed over the destination; a directory of
// outputs is built in a staging directory beside the destination and renamed into place only
// when every file in it was written. Every write, flush and close is checked; a failure throws
// IoError naming the path and the system's reason, and leaves the destination as it was.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/error.h"

namespace gpudays {

// A failed write (disk full, read-only, permission).
class IoError : public EnvironmentError {
 public:
  using EnvironmentError::EnvironmentError;
};

// Writes `contents` to `path` atomically. A path that is not a regular file (/dev/stdout,
// /dev/full) is written in place, every write checked. An existing file is replaced only when the
// process may write it (as root: when any of its write bits is set), and keeps its permission
// bits; a write-protected one is refused with IoError (exit 1, as a read-only directory is).
void write_file_atomically(const std::string& path, const std::string& contents);

// The same, piece by piece, for contents too large to hold twice (a checkpoint's tensors): the
// pieces go to a temporary file beside `path`, which commit() flushes and renames over it. A file
// not committed (an error, an exception) is removed and `path` left as it was.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws IoError
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);  // throws IoError
  void commit();                               // throws IoError

 private:
  std::string path_;
  std::string temp_;  // empty: written in place (not a regular file)
  int fd_ = -1;
};

// A directory of outputs written all or nothing.
class StagedDirectory {
 public:
  // Throws InputError when `destination` exists and is not empty unless `replace` is set, or is
  // not a directory; IoError when the staging directory cannot be made.
  StagedDirectory(std::string destination, bool replace);
  ~StagedDirectory();  // removes the staging directory unless committed
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& path() const { return staging_; }  // where to write now
  // Renames the staging directory over the destination (the old one, with `replace`, is removed
  // only after the new one is in place).
  void commit();

 private:
  std::string destination_;
  std::string staging_;
  bool committed_ = false;
};

// The absolute form of a path (a job may run from another directory).
std::string absolute_path(const std::string& path);

// Checks on an output path before anything is read or written; each throws InputError naming
// `flag` (such as "--out").
// Refuses an empty path, and one whose last part names no file: a '/' at its end, '.' or '..'.
void check_output_name(const std::string& path, const std::string& flag);
// That, and an existing directory.
void check_output_file(const std::string& path, const std::string& flag);
// Whether `a` and `b` are the same file: by identity (device and inode, so hard and symbolic links
// count) when both exist, else by their absolute paths with the links that exist resolved.
bool same_file(const std::string& a, const std::string& b);
// Whether `path` is `dir` or lies inside it (the links that exist resolved).
bool inside_directory(const std::string& path, const std::string& dir);
// Refuses an output that is one of `inputs` (empty entries are skipped), which writing it would
// replace while, or before, it is read.
void refuse_output_over_inputs(const std::string& output,
                               const std::vector<std::string>& inputs,
                               const std::string& flag);

}  // namespace gpudays
