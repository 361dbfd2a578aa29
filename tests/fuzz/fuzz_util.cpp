// Scratch files and failure reports of the fuzz targets.
#include "fuzz_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

namespace gpudays::fuzz {
namespace {

// The process's scratch files, removed at a normal exit (libFuzzer exits normally at the end of
// -max_total_time; a crashing input is saved by libFuzzer itself).
struct ScratchFiles {
  std::map<std::string, std::string> paths;
  ~ScratchFiles() {
    std::error_code ec;
    for (const auto& [name, path] : paths) std::filesystem::remove(path, ec);
  }
};

ScratchFiles& scratch() {
  static ScratchFiles files;
  return files;
}

}  // namespace

std::string write_input(const uint8_t* data, size_t size, const std::string& name) {
  std::string& path = scratch().paths[name];
  if (path.empty()) {
    path = (std::filesystem::temp_directory_path() /
            ("gpudays-fuzz-" + std::to_string(getpid()) + "-" + name))
               .string();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::cerr << "fuzz: cannot write the scratch file " << path << "\n";
    std::exit(1);  // the environment, not a finding
  }
  return path;
}

void fail(std::string_view what) {
  std::cerr << "fuzz: bug: " << what << std::endl;
  std::abort();
}

}  // namespace gpudays::fuzz
