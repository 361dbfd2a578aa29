// Column mapping of TrialRecord <-> SQLite. Each column names the record's field through an
// accessor; enumerations are stored as their names; the method fields come from their table.
#include "results/trial_columns.h"

#include <sqlite3.h>

#include <algorithm>

#include "search_space/method_fields.h"

// An accessor of a TrialRecord field, const or not: FIELD(config.micro_batch_size).
#define FIELD(path)      \
  [](auto& r) -> auto& { \
    return r.path;       \
  }

namespace gpudays {
namespace {

std::string text_at(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
}

void bind_text(sqlite3_stmt* s, int i, const std::string& value) {
  sqlite3_bind_text(s, i, value.c_str(), -1, SQLITE_TRANSIENT);
}

template <typename Field>
TrialColumn text(const char* name, Field field, int64_t since = 1, const char* def = "''") {
  return {name,
          "TEXT NOT NULL",
          since,
          def,
          [field](sqlite3_stmt* s, int i, const TrialRecord& r) { bind_text(s, i, field(r)); },
          [field](sqlite3_stmt* s, int i, TrialRecord& r) { field(r) = text_at(s, i); }};
}

// An enumeration stored as its name (to_string / parse).
template <typename Field, typename Parse>
TrialColumn named(const char* name, Field field, Parse parse, int64_t since, const char* def) {
  return {
      name,
      "TEXT NOT NULL",
      since,
      def,
      [field](sqlite3_stmt* s, int i, const TrialRecord& r) {
        bind_text(s, i, to_string(field(r)));
      },
      [field, parse](sqlite3_stmt* s, int i, TrialRecord& r) { field(r) = parse(text_at(s, i)); }};
}

template <typename Field>
TrialColumn integer(const char* name, Field field, int64_t since = 1) {
  return {name,
          "INTEGER NOT NULL",
          since,
          "0",
          [field](sqlite3_stmt* s, int i, const TrialRecord& r) {
            sqlite3_bind_int64(s, i, static_cast<sqlite3_int64>(field(r)));
          },
          [field](sqlite3_stmt* s, int i, TrialRecord& r) {
            using T = std::remove_reference_t<decltype(field(r))>;
            field(r) = static_cast<T>(sqlite3_column_int64(s, i));
          }};
}

template <typename Field>
TrialColumn real(const char* name, Field field, int64_t since = 1) {
  return {
      name,
      "REAL NOT NULL",
      since,
      "0.0",
      [field](sqlite3_stmt* s, int i, const TrialRecord& r) {
        sqlite3_bind_double(s, i, field(r));
      },
      [field](sqlite3_stmt* s, int i, TrialRecord& r) { field(r) = sqlite3_column_double(s, i); }};
}

// A method field of the configuration: a flag as 0 / 1, a choice as its name.
TrialColumn method_column(const MethodField& f) {
  if (f.kind() == MethodKind::kFlag) {
    return {std::string(f.name),
            "INTEGER NOT NULL",
            f.results_since,
            "0",
            [&f](sqlite3_stmt* s, int i, const TrialRecord& r) {
              sqlite3_bind_int64(s, i, f.flag(r.config.methods) ? 1 : 0);
            },
            [&f](sqlite3_stmt* s, int i, TrialRecord& r) {
              f.set_flag(r.config.methods, sqlite3_column_int64(s, i) != 0);
            }};
  }
  return {std::string(f.name),
          "TEXT NOT NULL",
          f.results_since,
          "'" + f.text(MethodSet{}) + "'",
          [&f](sqlite3_stmt* s, int i, const TrialRecord& r) {
            bind_text(s, i, f.text(r.config.methods));
          },
          [&f](sqlite3_stmt* s, int i, TrialRecord& r) {
            f.set_text(r.config.methods, text_at(s, i));
          }};
}

// Every column but the method fields', which follow the cluster shape.
std::vector<TrialColumn> columns_but_methods() {
  return {
      text("model", FIELD(model)),
      text("gpu", FIELD(gpu)),
      text("device_name", FIELD(measured.device_name)),
      integer("num_nodes", FIELD(cluster.num_nodes)),
      integer("gpus_per_node", FIELD(cluster.gpus_per_node)),
      integer("micro_batch_size", FIELD(config.micro_batch_size)),
      integer("grad_acc_steps", FIELD(config.grad_acc_steps)),
      integer("memory_limit_bytes", FIELD(memory_limit_bytes)),
      named("status", FIELD(measured.status), parse_trial_status, 1, "'ok'"),
      text("message", FIELD(measured.message)),
      integer("steps_timed", FIELD(measured.steps_timed)),
      real("step_time_median_s", FIELD(measured.step_time_median_s)),
      real("step_time_min_s", FIELD(measured.step_time_min_s)),
      real("step_time_max_s", FIELD(measured.step_time_max_s)),
      integer("peak_memory_bytes", FIELD(measured.peak_memory_bytes)),
      real("samples_per_s", FIELD(samples_per_s)),
      real("tokens_per_s", FIELD(tokens_per_s)),
      real("mfu", FIELD(mfu)),
      real("hfu", FIELD(hfu)),
      real("training_days", FIELD(training_days)),
      real("gpu_days", FIELD(gpu_days)),
      real("predicted_step_time_s", FIELD(predicted_step_time_s)),
      integer("predicted_memory_bytes", FIELD(predicted_memory_bytes)),
      text("gpudays_version", FIELD(gpudays_version)),
      text("git_commit", FIELD(git_commit)),
      text("torch_version", FIELD(measured.torch_version)),
      text("driver", FIELD(measured.driver)),
      text("hostname", FIELD(hostname)),
      text("created_at", FIELD(created_at)),
      // Schema 2: composed-parts timing.
      named("timing", FIELD(measured.timing), parse_step_timing, 2, "'whole'"),
      real("micro_step_time_s", FIELD(measured.micro_step_time_s), 2),
      real("last_micro_step_time_s", FIELD(measured.last_micro_step_time_s), 2),
      real("optimizer_time_s", FIELD(measured.optimizer_time_s), 2),
      real("check_step_time_s", FIELD(measured.check_step_time_s), 2),
      text("timing_check", FIELD(measured.timing_check), 2),
      // Schema 4: what ran on the device.
      integer("peak_reserved_bytes", FIELD(measured.peak_reserved_bytes), 4),
      text("cuda_graph", FIELD(measured.cuda_graph), 4),
      text("scan", FIELD(measured.scan), 4),
      // Schema 5: the model's identity (results_db.cpp fills it in for older rows).
      text("model_digest", FIELD(model_digest), 5),
      // Schema 6: the measurement rule (part of the key only when not "gpudays").
      named("rule", FIELD(rule), parse_measurement_rule, 6, "'gpudays'"),
  };
}

std::vector<TrialColumn> with_method_columns(std::vector<TrialColumn> columns) {
  auto at = columns.begin();
  while (at != columns.end() && at->name != "gpus_per_node") ++at;
  std::vector<TrialColumn> fields;
  for (const MethodField& f : method_fields()) fields.push_back(method_column(f));
  columns.insert(at == columns.end() ? at : at + 1, fields.begin(), fields.end());
  return columns;
}

}  // namespace

const std::vector<TrialColumn>& trial_columns() {
  static const std::vector<TrialColumn> kColumns = with_method_columns(columns_but_methods());
  return kColumns;
}

int64_t trial_columns_schema_version() {
  int64_t version = 1;
  for (const TrialColumn& c : trial_columns()) version = std::max(version, c.since_version);
  return version;
}

}  // namespace gpudays
