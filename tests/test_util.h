// Shared helpers for the torch-free tests: the catalog, temporary files, running the binary.
#pragma once

#include <string>

#include "catalog/catalog.h"

namespace gpudays::test {

const Catalog& catalog();  // the repository's configs/, loaded once
// <process_temp_dir()>/name with these contents; removed with the directory when the process exits.
std::string write_temp_file(const std::string& name, const std::string& contents);

struct CommandResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};
CommandResult run_gpudays(const std::string& args);

}  // namespace gpudays::test
