// The results file's tables: made, checked and upgraded from the one column list.
#include "results/results_schema.h"

#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/error.h"
#include "results/trial_columns.h"

namespace gpudays {
namespace {

// Trials of a key already stored, measured again by another run at the same time: kept, never
// dropped, and never used in place of the key's trial.
void create_repeats_table(sqlite3* db) {
  std::string columns = "id INTEGER PRIMARY KEY, trial_key TEXT NOT NULL";
  for (const TrialColumn& c : trial_columns())
    columns += fmt::format(", {} {}", c.name, c.sql_type);
  exec(db, fmt::format("CREATE TABLE repeats ({})", columns));
}

// The model of each digest its trials name: its model file, so that a reader re-derives the
// trials of a model no catalog has (one from --model-file).
void create_models_table(sqlite3* db) {
  exec(db, "CREATE TABLE models (digest TEXT PRIMARY KEY, toml TEXT NOT NULL)");
}

// The columns `table` has; none when there is no such table.
std::set<std::string> table_columns(sqlite3* db, const std::string& table) {
  Stmt s = prepare(db, fmt::format("PRAGMA table_info({})", table));
  std::set<std::string> names;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(s.get(), 1);
    if (name != nullptr) names.insert(reinterpret_cast<const char*>(name));
  }
  return names;
}

void require_columns(sqlite3* db,
                     const std::string& path,
                     int64_t version,
                     const std::string& table,
                     const std::vector<std::string>& columns) {
  const std::set<std::string> have = table_columns(db, table);
  const std::string stamp =
      fmt::format("{} is a gpudays results database (schema {})", path, version);
  if (have.empty()) {
    throw InputError(
        fmt::format("{} without its table '{}' (edited or damaged); left untouched", stamp, table));
  }
  for (const std::string& column : columns) {
    if (have.count(column) == 0) {
      throw InputError(
          fmt::format("{} whose table '{}' lacks the column '{}' (edited or "
                      "damaged); left untouched",
                      stamp,
                      table,
                      column));
    }
  }
}

// The key columns and the trial columns a table of a file of `version` has.
std::vector<std::string> trial_table_columns(int64_t version) {
  std::vector<std::string> names = {"id", "trial_key"};
  for (const TrialColumn& c : trial_columns()) {
    if (c.since_version <= version) names.push_back(c.name);
  }
  return names;
}

void add_missing_columns(sqlite3* db, const std::string& table) {
  const std::set<std::string> have = table_columns(db, table);
  for (const TrialColumn& c : trial_columns()) {
    if (have.count(c.name) > 0) continue;
    exec(db,
         fmt::format("ALTER TABLE {} ADD COLUMN {} {} DEFAULT {}",
                     table,
                     c.name,
                     c.sql_type,
                     c.default_sql));
  }
}

// Schema 5: the digest of each row's model, from the catalog model of its name, and its key made
// with it. A row that cannot be read is left as it is (a reader names it and never uses it).
void rekey_rows(sqlite3* db, const std::string& table, const CatalogModel& catalog_model) {
  struct Rekey {
    int64_t id;
    std::string digest;
    std::string key;
  };
  std::vector<Rekey> rekeys;
  std::map<std::string, std::string> digests;  // name -> digest ("" for none)
  Stmt s = prepare(db, fmt::format("SELECT id, {} FROM {}", select_list(schema_version()), table));
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    TrialRecord r;
    try {
      int i = 1;
      for (const TrialColumn& c : trial_columns()) c.read(s.get(), i++, r);
    } catch (const InputError&) {
      continue;
    }
    auto [it, fresh] = digests.emplace(r.model, "");
    if (fresh) {
      if (const ModelSpec* m = catalog_model(r.model)) {
        it->second = model_digest(*m);
        store_model_row(db, *m);
      }
    }
    if (it->second.empty()) continue;
    r.model_digest = it->second;
    rekeys.push_back({sqlite3_column_int64(s.get(), 0), r.model_digest, r.key()});
  }
  s.reset();
  Stmt update = prepare(
      db, fmt::format("UPDATE {} SET model_digest = ?1, trial_key = ?2 WHERE id = ?3", table));
  for (const Rekey& r : rekeys) {
    sqlite3_bind_text(update.get(), 1, r.digest.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(update.get(), 2, r.key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(update.get(), 3, r.id);
    if (sqlite3_step(update.get()) != SQLITE_DONE) {
      throw std::runtime_error(
          fmt::format("SQLite: {} re-keying {} row {}", sqlite3_errmsg(db), table, r.id));
    }
    sqlite3_reset(update.get());
  }
}

// A statement as an error names it: its first line, at most 60 characters (a CREATE TABLE is
// dozens of lines).
std::string sql_head(const std::string& sql) {
  constexpr size_t kMaxChars = 60;
  const std::string line = sql.substr(0, sql.find('\n'));
  return line.size() <= kMaxChars && line.size() == sql.size() ? line
                                                               : line.substr(0, kMaxChars) + " ...";
}

}  // namespace

Stmt prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    throw std::runtime_error(fmt::format("SQLite: {} in '{}'", sqlite3_errmsg(db), sql_head(sql)));
  }
  return Stmt(s);
}

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error(fmt::format("SQLite: {} in '{}'", message, sql_head(sql)));
  }
}

int64_t schema_version() {
  return trial_columns_schema_version();
}

std::string column_list() {
  std::string out;
  for (const TrialColumn& c : trial_columns())
    out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

std::string select_list(int64_t version) {
  std::string out;
  for (const TrialColumn& c : trial_columns()) {
    out += out.empty() ? "" : ", ";
    out += c.since_version <= version ? std::string(c.name)
                                      : fmt::format("{} AS {}", c.default_sql, c.name);
  }
  return out;
}

void create_schema(sqlite3* db) {
  std::string columns = "id INTEGER PRIMARY KEY, trial_key TEXT NOT NULL UNIQUE";
  for (const TrialColumn& c : trial_columns())
    columns += fmt::format(", {} {}", c.name, c.sql_type);
  exec(db, "BEGIN");
  exec(db, fmt::format("CREATE TABLE trials ({})", columns));
  create_repeats_table(db);
  create_models_table(db);
  exec(db, fmt::format("PRAGMA application_id = {}", kApplicationId));
  exec(db, fmt::format("PRAGMA user_version = {}", schema_version()));
  exec(db, "COMMIT");
}

void check_tables(sqlite3* db, const std::string& path, int64_t version) {
  require_columns(db, path, version, "trials", trial_table_columns(version));
  // Before schema 5, an upgrade added new columns to trials alone: repeats has those of 3.
  if (version >= 3) {
    require_columns(db,
                    path,
                    version,
                    "repeats",
                    trial_table_columns(version >= kModelDigestSchema ? version : 3));
  }
  if (version >= kModelDigestSchema) {
    require_columns(db, path, version, "models", {"digest", "toml"});
  }
}

void upgrade_schema(sqlite3* db, int64_t version, const CatalogModel& catalog_model) {
  exec(db, "BEGIN");
  add_missing_columns(db, "trials");
  if (version < 3) {
    create_repeats_table(db);
  } else {
    add_missing_columns(db, "repeats");
  }
  if (version < kModelDigestSchema) {
    create_models_table(db);
    rekey_rows(db, "trials", catalog_model);
    rekey_rows(db, "repeats", catalog_model);
  }
  exec(db, fmt::format("PRAGMA user_version = {}", schema_version()));
  exec(db, "COMMIT");
}

void store_model_row(sqlite3* db, const ModelSpec& model) {
  Stmt s = prepare(db, "INSERT OR IGNORE INTO models (digest, toml) VALUES (?1, ?2)");
  const std::string digest = model_digest(model);
  const std::string toml = model_toml(model);
  sqlite3_bind_text(s.get(), 1, digest.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.get(), 2, toml.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(s.get()) != SQLITE_DONE) {  // a full disk: the environment's fault
    throw EnvironmentError(fmt::format(
        "cannot store model {} in the results database ({})", digest, sqlite3_errmsg(db)));
  }
}

}  // namespace gpudays
