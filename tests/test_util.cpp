// Test helpers.
#include "test_util.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "process_dir.h"
#include "results/trial_columns.h"
#include "results/trial_rederive.h"

namespace gpudays::test {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fresh_path(const std::string& name) {
  const std::string path = write_temp_file(name, "");
  std::filesystem::remove(path);
  return path;
}

const Catalog& catalog() {
  static const Catalog kCatalog = Catalog::load({});
  return kCatalog;
}

std::string write_temp_file(const std::string& name, const std::string& contents) {
  // One directory per process (ctest runs test processes in parallel), removed at its exit.
  const auto path = process_temp_dir().path() / name;
  std::ofstream(path) << contents;
  return path.string();
}

CommandResult run_gpudays(const std::string& args) {
  // Unique per process and call: ctest runs test processes in parallel.
  static int calls = 0;
  const std::string stem = "cmd." + std::to_string(getpid()) + "." + std::to_string(calls++);
  const std::string out_path = write_temp_file(stem + ".out", "");
  const std::string err_path = write_temp_file(stem + ".err", "");
  const std::string command =
      std::string(GPUDAYS_BINARY) + " " + args + " >" + out_path + " 2>" + err_path;
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw) << " in " << sql;
  sqlite3_close(raw);
}

void write_old_results_db(const std::string& path,
                          int64_t version,
                          const std::vector<TrialRecord>& rows) {
  const auto columns = [](int64_t upto) {
    std::string out;
    for (const TrialColumn& c : trial_columns()) {
      if (c.since_version <= upto) out += fmt::format(", {} {}", c.name, c.sql_type);
    }
    return out;
  };
  std::string sql = fmt::format(
      "CREATE TABLE trials (id INTEGER PRIMARY KEY, trial_key TEXT NOT NULL UNIQUE{}); "
      "PRAGMA application_id = {}; PRAGMA user_version = {};",
      columns(version),
      0x47505544,
      version);
  if (version >= 3) {
    sql += fmt::format("CREATE TABLE repeats (id INTEGER PRIMARY KEY, trial_key TEXT NOT NULL{});",
                       columns(3));
  }
  exec_sql(path, sql);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  for (const TrialRecord& t : rows) {
    std::string names = "trial_key", values = "?1";
    std::vector<const TrialColumn*> used;
    for (const TrialColumn& c : trial_columns()) {
      if (c.since_version > version) continue;
      used.push_back(&c);
      names += ", " + c.name;
      values += fmt::format(", ?{}", used.size() + 1);
    }
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(raw,
                       fmt::format("INSERT INTO trials ({}) VALUES ({})", names, values).c_str(),
                       -1,
                       &s,
                       nullptr);
    TrialRecord named = t;
    named.model_digest = t.model;  // the key of older schemas began with the model's name
    sqlite3_bind_text(s, 1, named.key().c_str(), -1, SQLITE_TRANSIENT);
    for (size_t i = 0; i < used.size(); ++i) used[i]->bind(s, static_cast<int>(i + 2), t);
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE) << sqlite3_errmsg(raw);
    sqlite3_finalize(s);
  }
  sqlite3_close(raw);
}

void set_measured_step(TrialRecord& trial, double step_s) {
  trial.measured.status = TrialStatus::kOk;
  trial.measured.steps_timed = 3;
  trial.measured.step_time_median_s = step_s;
  trial.measured.step_time_min_s = step_s;
  trial.measured.step_time_max_s = step_s;
  derive_figures(trial);
}

void derive_figures(TrialRecord& trial) {
  if (const ModelSpec* model = catalog().find_model(trial.model)) derive_figures(trial, *model);
}

void derive_figures(TrialRecord& trial, const ModelSpec& model) {
  trial.model_digest = model_digest(model);
  if (!trial.ok() || trial.step_time_s() <= 0.0) return;
  const GpuSpec* gpu = is_host_cpu_name(trial.gpu) ? nullptr : catalog().find_gpu(trial.gpu);
  StepWork work;
  try {
    work = trial_step_work(trial, model, gpu);
  } catch (const InputError&) {
    return;  // a configuration that cannot be: the row stays invalid
  }
  const StepFigures f = step_figures(work, trial.step_time_s());
  trial.samples_per_s = f.samples_per_s;
  trial.tokens_per_s = f.tokens_per_s;
  trial.training_days = f.training_days;
  trial.gpu_days = f.gpu_days;
  // On the host CPU, of a peak the row does not keep: unknown, as on the stand-in CPU.
  trial.mfu = gpu != nullptr ? f.mfu : 0.0;
  trial.hfu = gpu != nullptr ? f.hfu : 0.0;
}

TrialRecord pythia_1b_trial(int64_t micro_batch, double step_s, double predicted_s) {
  constexpr int64_t kGlobalBatch = 1024;  // pythia-1b's
  TrialRecord t;
  t.model = "pythia-1b";
  t.gpu = "a100-80gb-sxm";
  t.cluster = {1, 4};
  t.config.methods.free_lunch = true;
  t.config.methods.sharding = Sharding::kZero1;
  t.config.micro_batch_size = micro_batch;
  t.config.grad_acc_steps = kGlobalBatch / 4 / micro_batch;
  set_measured_step(t, step_s);
  t.measured.peak_memory_bytes = 30 * (int64_t{1} << 30);
  t.measured.device_name = "NVIDIA A100-SXM4-80GB";
  t.predicted_step_time_s = predicted_s;
  t.created_at = "2026-12-01T00:00:00Z";
  return t;
}

}  // namespace gpudays::test
