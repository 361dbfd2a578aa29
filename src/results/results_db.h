// The results database (SQLite, one file): every benchmark trial with full provenance. Opening an
// existing file first checks that it is a gpudays database, intact and with every table and column
// its schema has, and leaves anything else untouched. Each trial is written in its own
// transaction, keyed by its identity (its model's digest, not its name), so a sweep killed at any
// moment resumes without losing or duplicating a finished trial. Every row read is checked, its
// figures re-derived (trial_rederive.h); a row that fails is named on stderr and never returned.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/model_spec.h"
#include "common/error.h"
#include "results/trial_record.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gpudays {

class Catalog;

// A database file that cannot serve the request where another file would: none there (opened
// read-only), not SQLite, another application's, or one that cannot be written. The message says
// what is wrong with the file; the caller (the command line) says how to name another.
class ResultsFileError : public InputError {
 public:
  enum class Kind { kMissing, kUnusable };
  ResultsFileError(Kind kind, const std::string& message) : InputError(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct ResultsDbOptions {
  std::string path = "gpudays.db";
  bool read_only = false;  // for queries (`best`, `report`): never creates the file
  // The GPUs a stored row is re-derived against, and the models that rows of a file older than
  // schema 5 stand for by their name: needed to read rows and to upgrade a file, not to count.
  const Catalog* catalog = nullptr;
};

struct TrialFilter {
  std::string model;         // the name shown; empty: any
  std::string model_digest;  // the model itself (catalog/model_loader.h); empty: any
  std::string gpu;
  int64_t num_nodes = 0;  // 0: any
  int64_t gpus_per_node = 0;
  std::optional<TrialStatus> status = std::nullopt;  // none: any
  // The gpudays rule's trials unless asked otherwise: what every reader of the best configuration
  // uses. none: both rules (`results`).
  std::optional<MeasurementRule> rule = MeasurementRule::kGpudays;
};

class ResultsDb {
 public:
  // Throws ResultsFileError for a file that cannot serve (an empty path, a directory; opened
  // read-only, none there or an empty file; opened for writing, one that cannot be written: before
  // any trial runs), InputError for a corrupted or newer one.
  static ResultsDb open(const ResultsDbOptions& options);
  ResultsDb(ResultsDb&&) noexcept = default;
  ResultsDb& operator=(ResultsDb&&) noexcept = default;
  ~ResultsDb();

  // Rows are validated as they are read (row_problem, then rederive_figures against the model of
  // their digest and the catalog's GPU): an invalid row is never returned, and is named once on
  // stderr (the first few by name, the rest counted).
  std::optional<TrialRecord> find(const std::string& key) const;
  // Keeps `model`'s file under its digest, for readers to re-derive its trials by: before its
  // first trial is stored (a catalog model's trials are re-derived from the catalog without it).
  void store_model(const ModelSpec& model);
  // Stores `trial` (its model_digest set) as its key's trial unless a valid trial with that key
  // exists (an invalid or killed one is replaced); returns whether it was. Otherwise (another run
  // measured the same configuration at the same time) it is kept as a repeat, never used in place
  // of the stored one.
  bool insert(const TrialRecord& trial);
  // Repeats kept under `key` (0 in a file older than schema 3).
  int64_t repeat_count(const std::string& key) const;
  std::vector<TrialRecord> query(const TrialFilter& filter) const;
  // Rows of `filter`'s name, GPU and shape stored at or after `created_since` (ISO 8601 UTC),
  // valid or not: the progress of a sweep, not its results. Needs no catalog.
  int64_t count_since(const TrialFilter& filter, const std::string& created_since) const;
  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  ResultsDb(std::unique_ptr<sqlite3, Closer> db,
            const ResultsDbOptions& options,
            int64_t schema_version);
  // open()'s work once the path is checked; `fresh`: no results in it yet (absent or empty).
  static ResultsDb open_file(const ResultsDbOptions& options, bool fresh);
  bool insert_into(const char* table, const TrialRecord& trial);
  std::optional<TrialRecord> read_row(sqlite3_stmt* s) const;
  std::string rederive(TrialRecord& trial) const;
  const ModelSpec* model_of(const std::string& digest) const;
  void warn(int64_t id, const TrialRecord& trial, const std::string& problem) const;
  void warn_unnamed() const;

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  const Catalog* catalog_ = nullptr;
  std::string select_list_;  // the columns, with defaults for those an older file lacks
  int64_t schema_version_ = 0;
  mutable std::map<std::string, std::optional<ModelSpec>> models_;  // digest -> model, or none
  mutable std::set<int64_t> warned_;  // ids of invalid rows already warned about
  mutable int64_t unnamed_ = 0;       // of those, warned about past the named few, not yet counted
};

}  // namespace gpudays
