// Per-process scratch directories for the tests (process_dir.h).
#include "process_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace gpudays::test {

ProcessDir::ProcessDir(const std::filesystem::path& parent, const std::string& prefix)
    : owner_(::getpid()) {
  std::filesystem::create_directories(parent);
  std::string name = (parent / (prefix + "." + std::to_string(owner_) + ".XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw std::runtime_error("cannot make a directory " + name + ": " + std::strerror(errno));
  }
  path_ = name;
}

ProcessDir::~ProcessDir() {
  if (::getpid() != owner_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ProcessDir::fresh_dir(const std::string& name) const {
  const std::filesystem::path dir = path_ / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

const ProcessDir& process_temp_dir() {
  static const ProcessDir kDir(std::filesystem::temp_directory_path(), "gpudays-test");
  return kDir;
}

}  // namespace gpudays::test
