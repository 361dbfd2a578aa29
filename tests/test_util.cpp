// Test helpers.
#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "process_dir.h"

namespace gpudays::test {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const Catalog& catalog() {
  static const Catalog kCatalog = Catalog::load({});
  return kCatalog;
}

std::string write_temp_file(const std::string& name, const std::string& contents) {
  // One directory per process (ctest runs test processes in parallel), removed at its exit.
  const auto path = process_temp_dir().path() / name;
  std::ofstream(path) << contents;
  return path.string();
}

CommandResult run_gpudays(const std::string& args) {
  // Unique per process and call: ctest runs test processes in parallel.
  static int calls = 0;
  const std::string stem = "cmd." + std::to_string(getpid()) + "." + std::to_string(calls++);
  const std::string out_path = write_temp_file(stem + ".out", "");
  const std::string err_path = write_temp_file(stem + ".err", "");
  const std::string command =
      std::string(GPUDAYS_BINARY) + " " + args + " >" + out_path + " 2>" + err_path;
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

void set_measured_step(TrialRecord& trial, double step_s) {
  trial.measured.status = TrialStatus::kOk;
  trial.measured.steps_timed = 3;
  trial.measured.step_time_median_s = step_s;
  trial.measured.step_time_min_s = step_s;
  trial.measured.step_time_max_s = step_s;
}

}  // namespace gpudays::test
