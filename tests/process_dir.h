// Scratch space for tests: a directory of one test process alone (ctest runs test processes in
// parallel), removed with everything in it when that process exits, so nothing piles up between
// runs. A process killed by a signal leaves its directory behind: nothing runs at its end.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace gpudays::test {

class ProcessDir {
 public:
  // Makes <parent>/<prefix>.<pid>.XXXXXX (parent too, when missing).
  ProcessDir(const std::filesystem::path& parent, const std::string& prefix);
  // Removes the directory; only in the process that made it, not in a forked child that exits.
  ~ProcessDir();
  ProcessDir(const ProcessDir&) = delete;
  ProcessDir& operator=(const ProcessDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path()/name, a fresh empty directory (emptied when an earlier call made it).
  std::string fresh_dir(const std::string& name) const;

 private:
  std::filesystem::path path_;
  pid_t owner_ = 0;
};

// This process's directory under the system's temporary folder (TMPDIR, else /tmp), made on the
// first call.
const ProcessDir& process_temp_dir();

}  // namespace gpudays::test
