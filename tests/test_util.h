// Shared helpers for the torch-free tests: the catalog, temporary files, running the binary.
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "results/trial_record.h"

namespace gpudays::test {

const Catalog& catalog();  // the repository's configs/, loaded once
// <process_temp_dir()>/name with these contents; removed with the directory when the process exits.
std::string write_temp_file(const std::string& name, const std::string& contents);
std::string read_file(const std::string& path);  // "" when it cannot be read

struct CommandResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};
CommandResult run_gpudays(const std::string& args);

// A successful measurement of `step_s` seconds per step (3 steps, no spread), as a valid stored
// row needs it.
void set_measured_step(TrialRecord& trial, double step_s);

}  // namespace gpudays::test
