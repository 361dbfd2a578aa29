// Shared helpers for the torch-free tests: the catalog, temporary files, running the binary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "results/trial_record.h"

namespace gpudays::test {

const Catalog& catalog();  // the repository's configs/, loaded once
// <process_temp_dir()>/name with these contents; removed with the directory when the process exits.
std::string write_temp_file(const std::string& name, const std::string& contents);
std::string read_file(const std::string& path);  // "" when it cannot be read
// A temporary path unique to this test process that does not exist yet.
std::string fresh_path(const std::string& name);

struct CommandResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};
CommandResult run_gpudays(const std::string& args);

// A successful measurement of `step_s` seconds per step (3 steps, no spread), as a valid stored
// row needs it, and the figures derived from it (derive_figures).
void set_measured_step(TrialRecord& trial, double step_s);
// A stored trial of pythia-1b on 4 x a100-80gb-sxm at `micro_batch` (free-lunch + zero_1, the
// model's global batch of 1024), measured at `step_s`, 30 GiB peak, as the sweep stores it.
TrialRecord pythia_1b_trial(int64_t micro_batch, double step_s, double predicted_s);

// For a trial of a catalog model (by name): its model digest and, when it succeeded on a
// configuration that makes the model's global batch, its figures derived from its step time as
// the sweep stores them (results/trial_rederive.h; on the host CPU, MFU and HFU 0: unknown). Call
// after setting what it ran.
void derive_figures(TrialRecord& trial);
void derive_figures(TrialRecord& trial, const ModelSpec& model);  // of a model from a file

// Runs `sql` on the SQLite file `path` behind gpudays' back (a hand edit, a damaged row).
void exec_sql(const std::string& path, const std::string& sql);
// A results file of an older schema `version` as gpudays wrote it then: the tables of that version
// (before schema 5, an upgrade added columns to trials alone: repeats keeps those of 3) and
// `rows`, under the key that began with the model's name.
void write_old_results_db(const std::string& path,
                          int64_t version,
                          const std::vector<TrialRecord>& rows);

}  // namespace gpudays::test
