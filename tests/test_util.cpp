// Test helpers.
#include "test_util.h"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpudays::test {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

const Catalog& catalog() {
  static const Catalog kCatalog = Catalog::load({});
  return kCatalog;
}

std::string write_temp_file(const std::string& name, const std::string& contents) {
  const auto dir = std::filesystem::temp_directory_path() / "gpudays_tests";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << contents;
  return path.string();
}

CommandResult run_gpudays(const std::string& args) {
  const std::string out_path = write_temp_file("cmd.out", "");
  const std::string err_path = write_temp_file("cmd.err", "");
  const std::string command =
      std::string(GPUDAYS_BINARY) + " " + args + " >" + out_path + " 2>" + err_path;
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_all(out_path);
  r.err = read_all(err_path);
  return r;
}

}  // namespace gpudays::test
