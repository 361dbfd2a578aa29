// The results database (SQLite, one file): every benchmark trial with full provenance. Opening an
// existing file first checks that it is a gpudays database and intact, and leaves anything else
// untouched. Each trial is written in its own transaction, keyed by its identity, so a sweep
// killed at any moment resumes without losing or duplicating a finished trial.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "results/trial_record.h"

struct sqlite3;

namespace gpudays {

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
};

struct TrialFilter {
  std::string model;  // empty: any
  std::string gpu;
  int64_t num_nodes = 0;  // 0: any
  int64_t gpus_per_node = 0;
  std::optional<TrialStatus> status = std::nullopt;  // none: any
};

class ResultsDb {
 public:
  // Throws ResultsFileError for a file that cannot serve (also when opened for writing, one that
  // cannot be written: before any trial runs), InputError for a corrupted or newer one.
  static ResultsDb open(const ResultsDbOptions& options);
  ResultsDb(ResultsDb&&) noexcept = default;
  ResultsDb& operator=(ResultsDb&&) noexcept = default;
  ~ResultsDb();

  // Rows are validated as they are read (row_problem): an invalid row is never returned, and is
  // named once on stderr.
  std::optional<TrialRecord> find(const std::string& key) const;
  // Stores `trial` as its key's trial unless a valid trial with that key exists (an invalid or
  // killed one is replaced); returns whether it was. Otherwise (another run measured the same
  // configuration at the same time) it is kept as a repeat, never used in place of the stored one.
  bool insert(const TrialRecord& trial);
  // Repeats kept under `key` (0 in a file older than schema 3).
  int64_t repeat_count(const std::string& key) const;
  std::vector<TrialRecord> query(const TrialFilter& filter) const;
  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  ResultsDb(std::unique_ptr<sqlite3, Closer> db, std::string path, int64_t schema_version);
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  bool insert_into(const char* table, const TrialRecord& trial);
  std::string select_list_;  // the columns, with defaults for those an older file lacks
  int64_t schema_version_ = 0;
  mutable std::set<int64_t> warned_;  // ids of invalid rows already warned about
};

}  // namespace gpudays
