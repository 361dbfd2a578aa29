// Column mapping of TrialRecord <-> SQLite.
#include "results/trial_columns.h"

#include <sqlite3.h>

namespace gpudays {
namespace {

std::string text_at(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
}

template <typename T>
TrialColumn text(const char* name, T TrialRecord::*field, int since = 1, const char* def = "''") {
  return {name, "TEXT NOT NULL", since, def,
          [field](sqlite3_stmt* s, int i, const TrialRecord& r) {
            sqlite3_bind_text(s, i, (r.*field).c_str(), -1, SQLITE_TRANSIENT);
          },
          [field](sqlite3_stmt* s, int i, TrialRecord& r) { r.*field = text_at(s, i); }};
}

template <typename T>
TrialColumn integer(const char* name, T TrialRecord::*field) {
  return {name, "INTEGER NOT NULL", 1, "0",
          [field](sqlite3_stmt* s, int i, const TrialRecord& r) {
            sqlite3_bind_int64(s, i, static_cast<sqlite3_int64>(r.*field));
          },
          [field](sqlite3_stmt* s, int i, TrialRecord& r) {
            r.*field = static_cast<T>(sqlite3_column_int64(s, i));
          }};
}

TrialColumn real(const char* name, double TrialRecord::*field, int since = 1) {
  return {name, "REAL NOT NULL", since, "0.0",
          [field](sqlite3_stmt* s, int i, const TrialRecord& r) {
            sqlite3_bind_double(s, i, r.*field);
          },
          [field](sqlite3_stmt* s, int i, TrialRecord& r) { r.*field = sqlite3_column_double(s, i); }};
}

TrialColumn status_column() {
  return {"status", "TEXT NOT NULL", 1, "'ok'",
          [](sqlite3_stmt* s, int i, const TrialRecord& r) {
            sqlite3_bind_text(s, i, to_string(r.status).c_str(), -1, SQLITE_TRANSIENT);
          },
          [](sqlite3_stmt* s, int i, TrialRecord& r) {
            r.status = parse_trial_status(text_at(s, i));
          }};
}

}  // namespace

const std::vector<TrialColumn>& trial_columns() {
  using R = TrialRecord;
  static const std::vector<TrialColumn> kColumns = {
      text("model", &R::model),
      text("gpu", &R::gpu),
      text("device_name", &R::device_name),
      integer("num_nodes", &R::num_nodes),
      integer("gpus_per_node", &R::gpus_per_node),
      integer("free_lunch", &R::free_lunch),
      integer("activation_checkpointing", &R::activation_checkpointing),
      text("sharding", &R::sharding),
      integer("offloading", &R::offloading),
      integer("micro_batch_size", &R::micro_batch_size),
      integer("grad_acc_steps", &R::grad_acc_steps),
      integer("memory_limit_bytes", &R::memory_limit_bytes),
      status_column(),
      text("message", &R::message),
      integer("steps_timed", &R::steps_timed),
      real("step_time_median_s", &R::step_time_median_s),
      real("step_time_min_s", &R::step_time_min_s),
      real("step_time_max_s", &R::step_time_max_s),
      integer("peak_memory_bytes", &R::peak_memory_bytes),
      real("samples_per_s", &R::samples_per_s),
      real("tokens_per_s", &R::tokens_per_s),
      real("mfu", &R::mfu),
      real("hfu", &R::hfu),
      real("training_days", &R::training_days),
      real("gpu_days", &R::gpu_days),
      real("predicted_step_time_s", &R::predicted_step_time_s),
      integer("predicted_memory_bytes", &R::predicted_memory_bytes),
      text("gpudays_version", &R::gpudays_version),
      text("git_commit", &R::git_commit),
      text("torch_version", &R::torch_version),
      text("driver", &R::driver),
      text("hostname", &R::hostname),
      text("created_at", &R::created_at),
      // Schema 2: composed-parts timing.
      text("timing", &R::timing, 2, "'whole'"),
      real("micro_step_time_s", &R::micro_step_time_s, 2),
      real("last_micro_step_time_s", &R::last_micro_step_time_s, 2),
      real("optimizer_time_s", &R::optimizer_time_s, 2),
      real("check_step_time_s", &R::check_step_time_s, 2),
      text("timing_check", &R::timing_check, 2),
  };
  return kColumns;
}

}  // namespace gpudays
