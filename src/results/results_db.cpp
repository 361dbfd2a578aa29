// ResultsDb: SQLite storage of trials. Rollback journal (the default) keeps each committed trial
// durable across kill -9; nothing is written to a file that failed validation. An older schema is
// upgraded in one transaction when opened for writing (results_schema.h), and read as is, with
// the defaults, when opened read-only (a row of a file older than schema 5 then stands for the
// catalog model of its name, as the upgrade would make it).
#include "results/results_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "results/results_schema.h"
#include "results/trial_columns.h"
#include "results/trial_rederive.h"

namespace gpudays {
namespace {

// Invalid rows named on stderr, one line each, by one ResultsDb; the rest are counted.
constexpr size_t kNamedInvalidRows = 5;

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
  check_tables(db, path, version);
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

// The catalog model a row of a file older than schema 5 stands for: the one the sweep stored it
// under (its exact name), or nullptr.
const ModelSpec* catalog_model(const Catalog& catalog, const std::string& name) {
  for (const ModelSpec& m : catalog.models()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace

void ResultsDb::Closer::operator()(sqlite3* db) const {
  sqlite3_close(db);
}

ResultsDb::ResultsDb(std::unique_ptr<sqlite3, Closer> db,
                     const ResultsDbOptions& options,
                     int64_t version)
    : db_(std::move(db)),
      path_(options.path),
      catalog_(options.catalog),
      select_list_(select_list(version)),
      schema_version_(version) {}

ResultsDb::~ResultsDb() = default;

namespace {

// A path that cannot name a results database: empty, or a directory.
void check_path(const std::string& path) {
  if (path.empty()) {
    throw ResultsFileError(ResultsFileError::Kind::kUnusable, "the results database path is empty");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ResultsFileError(ResultsFileError::Kind::kUnusable,
                           fmt::format("{} is a directory, not a results database", path));
  }
}

// Why a file opened read-only holds no results: none there, or an empty file.
[[noreturn]] void throw_missing(const std::string& path, bool exists) {
  throw ResultsFileError(
      ResultsFileError::Kind::kMissing,
      exists ? fmt::format("{} is an empty file, not a gpudays results database yet", path)
             : fmt::format("no results database at {}", path));
}

}  // namespace

ResultsDb ResultsDb::open(const ResultsDbOptions& options) {
  const std::string& path = options.path;
  check_path(path);
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  const bool fresh = !exists || std::filesystem::file_size(path, ec) == 0;
  if (fresh && options.read_only) throw_missing(path, exists);
  if (!fresh && !looks_like_sqlite(path)) {
    throw ResultsFileError(
        ResultsFileError::Kind::kUnusable,
        fmt::format("{} is not a gpudays results database (not SQLite); left untouched", path));
  }
  try {
    return open_file(options, fresh);
  } catch (...) {
    // A database this call created and could not finish (a full disk, a file system that
    // refuses it) is removed: a 0-byte file would be read as "not a results database yet".
    if (!exists) {
      std::filesystem::remove(path, ec);
      std::filesystem::remove(path + "-journal", ec);
    }
    throw;
  }
}

ResultsDb ResultsDb::open_file(const ResultsDbOptions& options, bool fresh) {
  const std::string& path = options.path;
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
    throw InputError(fresh ? fmt::format("cannot make the results database {} ({})", path, e.what())
                           : fmt::format("{}: {}; left untouched", path, e.what()));
  }
  if (!options.read_only) check_writable(db.get(), path);
  if (version < schema_version() && !options.read_only) {
    if (options.catalog == nullptr) throw std::logic_error("upgrading results without a catalog");
    const Catalog& catalog = *options.catalog;
    try {
      upgrade_schema(db.get(), version, [&catalog](const std::string& name) {
        return catalog_model(catalog, name);
      });
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
  return ResultsDb(std::move(db), options, version);
}

// The model of `digest`: the one stored with its trials (when it is what the digest says), else
// the catalog's; nullptr when neither has it.
const ModelSpec* ResultsDb::model_of(const std::string& digest) const {
  auto [it, fresh] = models_.emplace(digest, std::nullopt);
  if (!fresh) return it->second ? &*it->second : nullptr;
  if (schema_version_ >= kModelDigestSchema) {
    Stmt s = prepare(db_.get(), "SELECT toml FROM models WHERE digest = ?1");
    sqlite3_bind_text(s.get(), 1, digest.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s.get()) == SQLITE_ROW && sqlite3_column_type(s.get(), 0) == SQLITE_TEXT) {
      try {
        const char* text = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0));
        ModelSpec m = parse_model_toml(text, fmt::format("{} models {}", path_, digest));
        if (model_digest(m) == digest) it->second = std::move(m);
      } catch (const InputError&) {
        // Not a model file: the catalog may still have the model.
      }
    }
  }
  if (!it->second) {
    for (const ModelSpec& m : catalog_->models()) {
      if (model_digest(m) == digest) it->second = m;
    }
  }
  return it->second ? &*it->second : nullptr;
}

// Why a row cannot be used as it is read, its figures re-derived; "" when it can.
std::string ResultsDb::rederive(TrialRecord& r) const {
  if (r.model_digest.empty()) {
    return fmt::format(
        "stored before results schema 5 under the name '{}', which no catalog model has: its "
        "model is unknown (kept; bench it again with --model-file to measure it)",
        r.model);
  }
  if (!r.ok()) return "";
  const ModelSpec* model = model_of(r.model_digest);
  if (model == nullptr) {
    return fmt::format("its model ({}) is neither stored in the file nor in the catalog",
                       r.model_digest.substr(0, 12));
  }
  const GpuSpec* gpu = nullptr;
  if (!is_host_cpu_name(r.gpu)) {
    gpu = catalog_->find_gpu(r.gpu);
    if (gpu == nullptr) return fmt::format("its GPU '{}' is not in the catalog", r.gpu);
  }
  return rederive_figures(r, *model, gpu);
}

// Reads the row at the statement's cursor: column 0 is the row id, the trial's columns follow.
// An unreadable or invalid row is empty, with a warning on stderr the first time it is met.
std::optional<TrialRecord> ResultsDb::read_row(sqlite3_stmt* s) const {
  if (catalog_ == nullptr) throw std::logic_error("results rows read without a catalog");
  const int64_t id = sqlite3_column_int64(s, 0);
  TrialRecord r;
  std::string problem;
  try {
    int i = 1;
    for (const TrialColumn& c : trial_columns()) c.read(s, i++, r);
    if (schema_version_ < kModelDigestSchema) {  // as the upgrade would re-key it
      const ModelSpec* m = catalog_model(*catalog_, r.model);
      r.model_digest = m != nullptr ? model_digest(*m) : "";
    }
    problem = row_problem(r);
    if (problem.empty()) problem = rederive(r);
  } catch (const InputError& e) {
    problem = e.what();
  }
  if (problem.empty()) return r;
  warn(id, r, problem);
  return std::nullopt;
}

void ResultsDb::warn(int64_t id, const TrialRecord& r, const std::string& problem) const {
  if (!warned_.insert(id).second) return;
  if (warned_.size() > kNamedInvalidRows) {
    ++unnamed_;
    return;
  }
  std::cerr << fmt::format(
      "gpudays: warning: {}: trial row {} ({}) ignored: {}\n", path_, id, describe(r), problem);
}

void ResultsDb::warn_unnamed() const {
  if (unnamed_ == 0) return;
  std::cerr << fmt::format("gpudays: warning: {}: {} more invalid trial row{} ignored\n",
                           path_,
                           unnamed_,
                           unnamed_ == 1 ? "" : "s");
  unnamed_ = 0;
}

std::optional<TrialRecord> ResultsDb::find(const std::string& key) const {
  Stmt s = prepare(db_.get(),
                   fmt::format("SELECT id, {} FROM trials WHERE trial_key = ?1", select_list_));
  sqlite3_bind_text(s.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(s.get()) != SQLITE_ROW) return std::nullopt;
  std::optional<TrialRecord> r = read_row(s.get());
  warn_unnamed();
  return r;
}

void ResultsDb::store_model(const ModelSpec& model) {
  store_model_row(db_.get(), model);
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
    // A full disk or a file taken away mid-run: the environment's fault, not gpudays'.
    throw EnvironmentError(fmt::format("cannot store the trial in the results database {} ({})",
                                       path_,
                                       sqlite3_errmsg(db_.get())));
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
  if (trial.model_digest.empty()) throw std::logic_error("a trial stored without its model");
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
    // A full disk or a file taken away mid-run: the environment's fault, not gpudays'.
    throw EnvironmentError(fmt::format("cannot store the trial in the results database {} ({})",
                                       path_,
                                       sqlite3_errmsg(db_.get())));
  }
  return insert(trial);
}

namespace {

// "model = ?1 AND ..." over the filter's parameters ?1 to ?7, for a file of schema `version`.
std::string filter_sql(int64_t version) {
  return fmt::format(
      "(?1 = '' OR model = ?1) AND (?2 = '' OR gpu = ?2) AND (?3 = 0 OR num_nodes = ?3) AND "
      "(?4 = 0 OR gpus_per_node = ?4) AND (?5 = '' OR status = ?5) AND {} AND {}",
      version >= kModelDigestSchema ? "(?6 = '' OR model_digest = ?6)" : "1",
      version >= kRuleSchema ? "(?7 = '' OR rule = ?7)" : "(?7 = '' OR ?7 = 'gpudays')");
}

void bind_filter(sqlite3_stmt* s, const TrialFilter& f) {
  sqlite3_bind_text(s, 1, f.model.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, f.gpu.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 3, f.num_nodes);
  sqlite3_bind_int64(s, 4, f.gpus_per_node);
  const std::string status = f.status ? to_string(*f.status) : "";
  sqlite3_bind_text(s, 5, status.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 6, f.model_digest.c_str(), -1, SQLITE_TRANSIENT);
  const std::string rule = f.rule ? to_string(*f.rule) : "";
  sqlite3_bind_text(s, 7, rule.c_str(), -1, SQLITE_TRANSIENT);
}

}  // namespace

std::vector<TrialRecord> ResultsDb::query(const TrialFilter& f) const {
  Stmt s = prepare(db_.get(),
                   fmt::format("SELECT id, {} FROM trials WHERE {} ORDER BY id",
                               select_list_,
                               filter_sql(schema_version_)));
  bind_filter(s.get(), f);
  std::vector<TrialRecord> out;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    std::optional<TrialRecord> r = read_row(s.get());
    // An older file has no digests to select by: its rows get theirs as they are read.
    if (r && (f.model_digest.empty() || r->model_digest == f.model_digest)) {
      out.push_back(std::move(*r));
    }
  }
  warn_unnamed();
  return out;
}

int64_t ResultsDb::count_since(const TrialFilter& f, const std::string& created_since) const {
  Stmt s = prepare(db_.get(),
                   fmt::format("SELECT COUNT(*) FROM trials WHERE {} AND created_at >= ?8",
                               filter_sql(schema_version_)));
  bind_filter(s.get(), f);
  sqlite3_bind_text(s.get(), 8, created_since.c_str(), -1, SQLITE_TRANSIENT);
  return sqlite3_step(s.get()) == SQLITE_ROW ? sqlite3_column_int64(s.get(), 0) : 0;
}

}  // namespace gpudays
