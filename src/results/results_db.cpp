// ResultsDb: SQLite storage of trials. Rollback journal (the default) keeps each committed trial
// durable across kill -9; nothing is written to a file that failed validation. An older schema is
// upgraded in one transaction when opened for writing (new columns get their defaults), and read
// as is, with the defaults, when opened read-only.
#include "results/results_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "common/error.h"
#include "results/trial_columns.h"

namespace gpudays {
namespace {

constexpr int kApplicationId = 0x47505544;  // "GPUD"
// 2: composed-parts timing columns; 3: the repeats table; 4: peak reserved memory, CUDA graph
// use and the selective scan that ran. Each later version adds columns, whose since_version
// (results/trial_columns.cpp) sets it.
int64_t schema_version() {
  return trial_columns_schema_version();
}

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

Stmt prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    throw std::runtime_error(fmt::format("SQLite: {} in '{}'", sqlite3_errmsg(db), sql));
  }
  return Stmt(s);
}

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error(fmt::format("SQLite: {} in '{}'", message, sql));
  }
}

int64_t pragma_int(sqlite3* db, const char* pragma) {
  Stmt s = prepare(db, fmt::format("PRAGMA {}", pragma));
  return sqlite3_step(s.get()) == SQLITE_ROW ? sqlite3_column_int64(s.get(), 0) : 0;
}

// SQLite's quick integrity check; a file too damaged to run it is not intact either.
// How long a command waits for a database another process holds: long enough for the writers of
// several jobs sharing one file (each trial is one short transaction) and for a writer that
// recovers a killed writer's journal; $GPUDAYS_DB_BUSY_TIMEOUT_S overrides it (docs/slurm.md).
int busy_timeout_ms() {
  constexpr long kDefaultS = 300, kMaxS = 86400;
  const char* env = std::getenv("GPUDAYS_DB_BUSY_TIMEOUT_S");
  if (env == nullptr || *env == '\0') return kDefaultS * 1000;
  char* end = nullptr;
  const long seconds = std::strtol(env, &end, 10);
  if (*end != '\0' || seconds < 0 || seconds > kMaxS) {
    throw InputError(
        fmt::format("$GPUDAYS_DB_BUSY_TIMEOUT_S: '{}' is not a whole number of seconds in [0, {}]",
                    env,
                    kMaxS));
  }
  return static_cast<int>(seconds * 1000);
}

enum class Health { kIntact, kDamaged, kBusy };

// Busy (another process holds a lock past the timeout, or a hot journal awaits a writer to roll it
// back) is not damage: only a failed integrity check is.
bool is_busy(sqlite3* db, int rc) {
  const int code = sqlite3_extended_errcode(db);
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ||
         code == SQLITE_READONLY_ROLLBACK || code == SQLITE_READONLY_RECOVERY;
}

Health health(sqlite3* db) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &raw, nullptr);
  if (rc != SQLITE_OK) return is_busy(db, rc) ? Health::kBusy : Health::kDamaged;
  Stmt check(raw);
  rc = sqlite3_step(check.get());
  if (rc != SQLITE_ROW) return is_busy(db, rc) ? Health::kBusy : Health::kDamaged;
  const unsigned char* text = sqlite3_column_text(check.get(), 0);
  const bool ok = text != nullptr && std::string(reinterpret_cast<const char*>(text)) == "ok";
  return ok ? Health::kIntact : Health::kDamaged;
}

bool looks_like_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof(header));
  return in.gcount() == 16 && std::string(header, 16) == std::string("SQLite format 3\0", 16);
}

std::string column_list() {
  std::string out;
  for (const TrialColumn& c : trial_columns())
    out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

// The select list for a file of schema `version`: columns it lacks read as their defaults.
std::string select_list(int64_t version) {
  std::string out;
  for (const TrialColumn& c : trial_columns()) {
    out += out.empty() ? "" : ", ";
    out += c.since_version <= version ? std::string(c.name)
                                      : fmt::format("{} AS {}", c.default_sql, c.name);
  }
  return out;
}

// Trials of a key already stored, measured again by another run at the same time: kept, never
// dropped, and never used in place of the key's trial.
void create_repeats_table(sqlite3* db) {
  std::string columns = "id INTEGER PRIMARY KEY, trial_key TEXT NOT NULL";
  for (const TrialColumn& c : trial_columns())
    columns += fmt::format(", {} {}", c.name, c.sql_type);
  exec(db, fmt::format("CREATE TABLE repeats ({})", columns));
}

void upgrade_schema(sqlite3* db, int64_t version) {
  exec(db, "BEGIN");
  for (const TrialColumn& c : trial_columns()) {
    if (c.since_version <= version) continue;
    exec(db,
         fmt::format(
             "ALTER TABLE trials ADD COLUMN {} {} DEFAULT {}", c.name, c.sql_type, c.default_sql));
  }
  if (version < 3) create_repeats_table(db);
  exec(db, fmt::format("PRAGMA user_version = {}", schema_version()));
  exec(db, "COMMIT");
}

void create_schema(sqlite3* db) {
  std::string columns = "id INTEGER PRIMARY KEY, trial_key TEXT NOT NULL UNIQUE";
  for (const TrialColumn& c : trial_columns())
    columns += fmt::format(", {} {}", c.name, c.sql_type);
  exec(db, "BEGIN");
  exec(db, fmt::format("CREATE TABLE trials ({})", columns));
  create_repeats_table(db);
  exec(db, fmt::format("PRAGMA application_id = {}", kApplicationId));
  exec(db, fmt::format("PRAGMA user_version = {}", schema_version()));
  exec(db, "COMMIT");
}

// An existing file must be an intact gpudays database of our schema version or an older one;
// returns its version.
int64_t validate(sqlite3* db, const std::string& path) {
  // A damaged file can misread its own header: its integrity decides before its application id.
  const Health h = health(db);
  if (h == Health::kBusy) {
    throw InputError(fmt::format(
        "{} is locked by another process (a writer holds it, or a stopped writer's journal "
        "awaits recovery by the next command that writes to it); waited {} s "
        "($GPUDAYS_DB_BUSY_TIMEOUT_S); left untouched, try again",
        path,
        busy_timeout_ms() / 1000));
  }
  if (h == Health::kDamaged) {
    throw InputError(
        fmt::format("{} is a corrupted or truncated SQLite database (integrity check "
                    "failed); left untouched",
                    path));
  }
  if (pragma_int(db, "application_id") != kApplicationId) {
    throw ResultsFileError(
        ResultsFileError::Kind::kUnusable,
        fmt::format("{} is a SQLite database of another application; left untouched", path));
  }
  const int64_t version = pragma_int(db, "user_version");
  if (version < 1 || version > schema_version()) {
    throw InputError(
        fmt::format("{} has results schema {}, this gpudays reads 1 to {}; left "
                    "untouched",
                    path,
                    version,
                    schema_version()));
  }
  return version;
}

// A database opened for writing must take a write before any trial runs (a read-only file or
// directory, a full disk, otherwise fail only when the first trial is stored): a table made and
// rolled back. The user's choice of file, like a foreign one: exit 2, before anything ran.
void check_writable(sqlite3* db, const std::string& path) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db,
                              "BEGIN IMMEDIATE; CREATE TABLE gpudays_write_check (x); ROLLBACK",
                              nullptr,
                              nullptr,
                              &error);
  const std::string message = error != nullptr ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  if (rc == SQLITE_OK) return;
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  throw ResultsFileError(ResultsFileError::Kind::kUnusable,
                         fmt::format("cannot write the results database {} ({})", path, message));
}

// Reads the row at the statement's cursor: column 0 is the row id, the trial's columns follow.
// An unreadable or invalid row is empty, with a warning on stderr the first time it is met.
std::optional<TrialRecord> read_row(sqlite3_stmt* s,
                                    const std::string& path,
                                    std::set<int64_t>& warned) {
  const int64_t id = sqlite3_column_int64(s, 0);
  TrialRecord r;
  std::string problem;
  try {
    int i = 1;
    for (const TrialColumn& c : trial_columns()) c.read(s, i++, r);
    problem = row_problem(r);
  } catch (const InputError& e) {
    problem = e.what();
  }
  if (problem.empty()) return r;
  if (warned.insert(id).second) {
    std::cerr << fmt::format("gpudays: warning: {}: trial row {} ignored: {}\n", path, id, problem);
  }
  return std::nullopt;
}

}  // namespace

void ResultsDb::Closer::operator()(sqlite3* db) const {
  sqlite3_close(db);
}

ResultsDb::ResultsDb(std::unique_ptr<sqlite3, Closer> db, std::string path, int64_t version)
    : db_(std::move(db)),
      path_(std::move(path)),
      select_list_(select_list(version)),
      schema_version_(version) {}

ResultsDb::~ResultsDb() = default;

ResultsDb ResultsDb::open(const ResultsDbOptions& options) {
  const std::string& path = options.path;
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  const bool fresh = !exists || std::filesystem::file_size(path, ec) == 0;
  if (fresh && options.read_only) {
    throw ResultsFileError(ResultsFileError::Kind::kMissing,
                           fmt::format("no results database at {}", path));
  }
  if (!fresh && !looks_like_sqlite(path)) {
    throw ResultsFileError(
        ResultsFileError::Kind::kUnusable,
        fmt::format("{} is not a gpudays results database (not SQLite); left untouched", path));
  }
  sqlite3* raw = nullptr;
  const int flags =
      options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) {
    throw InputError(fmt::format("cannot open results database {}: {}",
                                 path,
                                 raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(db.get(), busy_timeout_ms());
  int64_t version = schema_version();
  try {
    if (fresh) {
      create_schema(db.get());
    } else {
      version = validate(db.get(), path);
    }
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const InputError*>(&e) != nullptr) throw;
    throw InputError(fmt::format("{}: {}; left untouched", path, e.what()));
  }
  if (!options.read_only) check_writable(db.get(), path);
  if (version < schema_version() && !options.read_only) {
    try {
      upgrade_schema(db.get(), version);
    } catch (const std::runtime_error& e) {
      sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw InputError(fmt::format("{}: upgrading results schema {} to {} failed ({})",
                                   path,
                                   version,
                                   schema_version(),
                                   e.what()));
    }
    version = schema_version();
  }
  return ResultsDb(std::move(db), path, version);
}

std::optional<TrialRecord> ResultsDb::find(const std::string& key) const {
  Stmt s = prepare(db_.get(),
                   fmt::format("SELECT id, {} FROM trials WHERE trial_key = ?1", select_list_));
  sqlite3_bind_text(s.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(s.get()) != SQLITE_ROW) return std::nullopt;
  return read_row(s.get(), path_, warned_);
}

// INSERT OR IGNORE into `table` (trials or repeats); returns whether a row was added.
bool ResultsDb::insert_into(const char* table, const TrialRecord& trial) {
  std::string placeholders = "?1";
  for (size_t i = 0; i < trial_columns().size(); ++i) placeholders += fmt::format(", ?{}", i + 2);
  Stmt s = prepare(db_.get(),
                   fmt::format("INSERT OR IGNORE INTO {} (trial_key, {}) VALUES ({})",
                               table,
                               column_list(),
                               placeholders));
  sqlite3_bind_text(s.get(), 1, trial.key().c_str(), -1, SQLITE_TRANSIENT);
  int i = 2;
  for (const TrialColumn& c : trial_columns()) c.bind(s.get(), i++, trial);
  if (sqlite3_step(s.get()) != SQLITE_DONE) {
    throw std::runtime_error(
        fmt::format("SQLite: {} writing {}", sqlite3_errmsg(db_.get()), path_));
  }
  return sqlite3_changes(db_.get()) == 1;
}

int64_t ResultsDb::repeat_count(const std::string& key) const {
  if (schema_version_ < 3) return 0;
  Stmt s = prepare(db_.get(), "SELECT COUNT(*) FROM repeats WHERE trial_key = ?1");
  sqlite3_bind_text(s.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
  return sqlite3_step(s.get()) == SQLITE_ROW ? sqlite3_column_int64(s.get(), 0) : 0;
}

bool ResultsDb::insert(const TrialRecord& trial) {
  if (insert_into("trials", trial)) return true;
  // The key is taken. An invalid row under it is never used, and a killed trial is measured
  // again: the new trial replaces either.
  const std::optional<TrialRecord> stored = find(trial.key());
  if (stored && stored->measured.status != TrialStatus::kKilled) {
    insert_into("repeats", trial);
    return false;
  }
  Stmt drop = prepare(db_.get(), "DELETE FROM trials WHERE trial_key = ?1");
  sqlite3_bind_text(drop.get(), 1, trial.key().c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(drop.get()) != SQLITE_DONE) {
    throw std::runtime_error(
        fmt::format("SQLite: {} writing {}", sqlite3_errmsg(db_.get()), path_));
  }
  return insert(trial);
}

std::vector<TrialRecord> ResultsDb::query(const TrialFilter& f) const {
  Stmt s =
      prepare(db_.get(),
              fmt::format("SELECT id, {} FROM trials WHERE (?1 = '' OR model = ?1) AND "
                          "(?2 = '' OR gpu = ?2) AND (?3 = 0 OR num_nodes = ?3) AND "
                          "(?4 = 0 OR gpus_per_node = ?4) AND (?5 = '' OR status = ?5) ORDER BY id",
                          select_list_));
  sqlite3_bind_text(s.get(), 1, f.model.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.get(), 2, f.gpu.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s.get(), 3, f.num_nodes);
  sqlite3_bind_int64(s.get(), 4, f.gpus_per_node);
  const std::string status = f.status ? to_string(*f.status) : "";
  sqlite3_bind_text(s.get(), 5, status.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<TrialRecord> out;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    if (auto r = read_row(s.get(), path_, warned_)) out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace gpudays
