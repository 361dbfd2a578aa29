// Fuzz target: the results database's row reader (results/results_db.h: every column read back
// into a TrialRecord, then row_problem) on rows of any content, as a database written by another
// gpudays version, a crashed writer or a hand edit may hold. The input is one row as text, a line
// per column that differs from a valid base row:
//   COLUMN=i:INTEGER | COLUMN=r:REAL | COLUMN=t:TEXT | COLUMN=b:BLOB
// (COLUMN is a trials column or trial_key). A bug is any exception out of query or find (an
// invalid row is skipped with a warning, never thrown), any sanitizer report, query and find
// disagreeing on the row, or a row the reader returns that cannot be stored again and read back.
// Rows are re-derived against the source tree's catalog (results/trial_rederive.h).
#include <sqlite3.h>

#include <unistd.h>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "fuzz_util.h"
#include "plan/step_figures.h"
#include "results/results_db.h"
#include "results/trial_columns.h"
#include "results/trial_rederive.h"

namespace {

using gpudays::ResultsDb;
using gpudays::TrialRecord;

const gpudays::Catalog& catalog() {
  static const gpudays::Catalog kCatalog = gpudays::Catalog::load({GPUDAYS_SOURCE_DIR "/configs"});
  return kCatalog;
}

// A valid successful trial, its figures derived from its step time: what columns the input does
// not name hold. pythia-14m on the host CPU (MFU unknown), micro-batch 8 x accumulation 128.
TrialRecord base_row() {
  TrialRecord t;
  const gpudays::ModelSpec& model = catalog().model("pythia-14m");
  t.model = model.name;
  t.model_digest = gpudays::model_digest(model);
  t.gpu = "cpu";
  t.config.micro_batch_size = 8;
  t.config.grad_acc_steps = 128;
  t.measured.status = gpudays::TrialStatus::kOk;
  t.measured.steps_timed = 3;
  t.measured.step_time_min_s = t.measured.step_time_median_s = t.measured.step_time_max_s = 1.0;
  const gpudays::StepFigures f =
      gpudays::step_figures(gpudays::trial_step_work(t, model, nullptr), 1.0);
  t.samples_per_s = f.samples_per_s;
  t.tokens_per_s = f.tokens_per_s;
  t.training_days = f.training_days;
  t.gpu_days = f.gpu_days;
  return t;
}

struct Db {
  std::string path;
  sqlite3* raw = nullptr;  // for rows the writer would never write
  std::optional<ResultsDb> db;
  Db() {
    // In memory where there is a tmpfs (each stored row is a synced transaction), unless TMPDIR
    // names a directory (scripts/fuzz.sh gives each run its own).
    const std::filesystem::path dir =
        std::getenv("TMPDIR") == nullptr && std::filesystem::is_directory("/dev/shm")
            ? std::filesystem::path("/dev/shm")
            : std::filesystem::temp_directory_path();
    path = (dir / ("gpudays-fuzz-" + std::to_string(getpid()) + "-results.db")).string();
    std::filesystem::remove(path);
    db.emplace(ResultsDb::open({.path = path, .read_only = false, .catalog = &catalog()}));
    if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK)
      gpudays::fuzz::fail("cannot open scratch db");
  }
  ~Db() {
    db.reset();
    sqlite3_close(raw);
    std::filesystem::remove(path);
  }
};

Db& scratch_db() {
  static Db db;
  return db;
}

// Binds `value` ("i:..", "r:..", "t:..", "b:..") to parameter i; false if it is none of them.
bool bind_value(sqlite3_stmt* s, int i, const std::string& value) {
  if (value.size() < 2 || value[1] != ':') return false;
  const std::string body = value.substr(2);
  switch (value[0]) {
    case 'i': {
      int64_t v = 0;
      const auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
      if (ec != std::errc()) return false;
      return sqlite3_bind_int64(s, i, v) == SQLITE_OK;
    }
    case 'r':
      return sqlite3_bind_double(s, i, std::strtod(body.c_str(), nullptr)) == SQLITE_OK;
    case 't':
      return sqlite3_bind_text(
                 s, i, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT) == SQLITE_OK;
    case 'b':
      return sqlite3_bind_blob(
                 s, i, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT) == SQLITE_OK;
  }
  return false;
}

// Inserts the base row with the input's columns overridden; false when SQLite refuses it (a NOT
// NULL column given a NaN, which SQLite stores as NULL) or the input names no column.
bool insert_row(sqlite3* db, const std::string& text) {
  const auto& columns = gpudays::trial_columns();
  std::string names = "trial_key";
  std::string params = "?1";
  for (size_t i = 0; i < columns.size(); ++i) {
    names += std::string(", ") + columns[i].name;
    params += ", ?" + std::to_string(i + 2);
  }
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(
      db, ("INSERT INTO trials (" + names + ") VALUES (" + params + ")").c_str(), -1, &s, nullptr);
  const TrialRecord base = base_row();
  sqlite3_bind_text(s, 1, "fuzz", -1, SQLITE_STATIC);
  for (size_t i = 0; i < columns.size(); ++i) columns[i].bind(s, static_cast<int>(i + 2), base);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = line.substr(0, eq);
    int index = name == "trial_key" ? 1 : 0;
    for (size_t i = 0; i < columns.size() && index == 0; ++i) {
      if (name == columns[i].name) index = static_cast<int>(i + 2);
    }
    if (index > 0) bind_value(s, index, line.substr(eq + 1));
  }
  const bool stored = sqlite3_step(s) == SQLITE_DONE;
  sqlite3_finalize(s);
  return stored;
}

// The stored row's trial_key when it is text (find looks keys up as text), else nullopt.
std::optional<std::string> stored_key(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(
      db, "SELECT trial_key FROM trials WHERE typeof(trial_key) = 'text'", -1, &s, nullptr);
  std::optional<std::string> key;
  if (sqlite3_step(s) == SQLITE_ROW) {
    key = std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)),
                      static_cast<size_t>(sqlite3_column_bytes(s, 0)));
  }
  sqlite3_finalize(s);
  return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  Db& db = scratch_db();
  sqlite3_exec(db.raw, "DELETE FROM trials", nullptr, nullptr, nullptr);
  if (!insert_row(db.raw, std::string(reinterpret_cast<const char*>(data), size))) return 0;
  try {
    const std::vector<TrialRecord> rows = db.db->query({});
    if (rows.size() > 1) fuzz::fail("one stored row read as several");
    const std::optional<std::string> key = stored_key(db.raw);
    if (key && key->find('\0') == std::string::npos &&
        db.db->find(*key).has_value() != !rows.empty()) {
      fuzz::fail("query and find disagree on the row");
    }
    for (const TrialRecord& row : rows) {
      // The row under its own key, stored by the writer and read back: still valid.
      sqlite3_exec(db.raw, "DELETE FROM trials", nullptr, nullptr, nullptr);
      if (!db.db->insert(row) || !db.db->find(row.key())) {
        fuzz::fail("a row the reader returned cannot be stored and read back");
      }
    }
  } catch (const std::exception& e) {
    fuzz::fail(std::string("the row reader threw: ") + e.what());
  }
  return 0;
}
