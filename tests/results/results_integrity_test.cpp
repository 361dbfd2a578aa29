// Stored rows re-derived, not believed, and keyed by the model itself: figures that do not follow
// from the step time (an edited MFU, a 1 us step, a 2^63-byte peak) are never used; two models of
// one name never share trials; an older file is re-keyed by its models' digests; and a stamped
// file without one of its tables or columns is refused when opened.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/error.h"
#include "results/results_db.h"
#include "results/trial_columns.h"
#include "results/trial_rederive.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// The rows of `sql` (one text column) on the file, behind gpudays' back.
std::vector<std::string> column_of(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  std::vector<std::string> out;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(s, 0);
    out.push_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
  }
  sqlite3_finalize(s);
  sqlite3_close(raw);
  return out;
}

ResultsDb open_db(const std::string& path, bool read_only = false) {
  return ResultsDb::open({path, read_only, &catalog()});
}

std::string open_error(const std::string& path, bool read_only) {
  try {
    open_db(path, read_only);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// pythia-160m on 8 x a100-80gb-sxm in micro-batches of 8: a step of 2 s is MFU 44%.
TrialRecord gpu_trial(double step_s = 2.0) {
  TrialRecord t;
  t.model = "pythia-160m";
  t.gpu = "a100-80gb-sxm";
  t.cluster = {1, 8};
  t.config.micro_batch_size = 8;
  t.config.grad_acc_steps = 16;
  t.measured.peak_memory_bytes = int64_t{20} << 30;
  test::set_measured_step(t, step_s);
  return t;
}

std::string rederived(TrialRecord t) {
  const GpuSpec* gpu = t.gpu == "cpu" ? nullptr : &catalog().gpu(t.gpu);
  return rederive_figures(t, catalog().model(t.model), gpu);
}

TEST(ModelIdentity, IsTheArchitectureAndRecipeNotTheName) {
  const ModelSpec& pythia = catalog().model("pythia-160m");
  const std::string digest = model_digest(pythia);
  EXPECT_EQ(digest.size(), 64u);
  ModelSpec renamed = pythia;
  renamed.name = "mine";
  renamed.hf_name = "";
  renamed.reported.reset();
  EXPECT_EQ(model_digest(renamed), digest);
  ModelSpec deeper = pythia;
  deeper.arch.n_layers += 1;
  EXPECT_NE(model_digest(deeper), digest);
  ModelSpec longer = pythia;
  longer.recipe.train_steps += 1;
  EXPECT_NE(model_digest(longer), digest);
  // Written once: the digest is stored in every results file, so this text may not drift.
  EXPECT_EQ(model_identity_toml(pythia).rfind("family = \"gpt_neox\"\n\n[arch]\n", 0), 0u);
  EXPECT_EQ(model_digest(catalog().model("pythia-14m")),
            "e6d96e3906abec2129580dd08a32a568d2e2aacc225b0027fc3ff8ee3bd0acac");
}

// Every catalog model is its own model: an older file's rows, re-keyed by the catalog model of
// their name, never collide.
TEST(ModelIdentity, EveryCatalogModelHasItsOwnDigest) {
  std::set<std::string> digests;
  for (const ModelSpec& m : catalog().models()) {
    EXPECT_TRUE(digests.insert(model_digest(m)).second) << m.name;
  }
}

TEST(RederiveFigures, ATrialAsTheSweepStoresItPasses) {
  TrialRecord t = gpu_trial();
  const TrialRecord stored = t;
  EXPECT_EQ(rederive_figures(t, catalog().model("pythia-160m"), &catalog().gpu("a100")), "");
  EXPECT_EQ(t.mfu, stored.mfu);
  EXPECT_EQ(t.tokens_per_s, stored.tokens_per_s);
  EXPECT_GT(t.mfu, 0.3);
  EXPECT_LT(t.mfu, 0.6);
}

// A 1 us step stored with the figures of a 2 s one (its MFU believed, it would be the best), a
// peak of 2^63 bytes, and each figure edited past the tolerance.
TEST(RederiveFigures, FiguresThatDoNotFollowFromTheStepTimeAreProblems) {
  TrialRecord fast = gpu_trial();
  fast.measured.step_time_min_s = fast.measured.step_time_median_s = 1e-6;
  fast.measured.step_time_max_s = 1e-6;
  EXPECT_NE(rederived(fast).find("a step time of 1e-06 s means MFU"), std::string::npos)
      << rederived(fast);
  TrialRecord huge = gpu_trial();
  huge.measured.peak_memory_bytes = std::numeric_limits<int64_t>::max();
  EXPECT_NE(rederived(huge).find("above the 80.0 GiB of a100-80gb-sxm"), std::string::npos)
      << rederived(huge);
  for (double TrialRecord::*figure : {&TrialRecord::mfu,
                                      &TrialRecord::hfu,
                                      &TrialRecord::tokens_per_s,
                                      &TrialRecord::samples_per_s,
                                      &TrialRecord::training_days,
                                      &TrialRecord::gpu_days}) {
    TrialRecord edited = gpu_trial();
    edited.*figure *= 1.0 + 2 * kFigureTolerance;
    EXPECT_NE(rederived(edited).find("where its step time of 2 s makes"), std::string::npos)
        << rederived(edited);
    TrialRecord rounded = gpu_trial();
    rounded.*figure *= 1.0 + kFigureTolerance / 2;
    EXPECT_EQ(rederived(rounded), "");
  }
  TrialRecord batch = gpu_trial();
  batch.config.grad_acc_steps = 15;
  EXPECT_NE(rederived(batch).find("is not the global batch of pythia-160m (1024)"),
            std::string::npos)
      << rederived(batch);
}

// The host CPU's peak is its own host's measurement, which the row does not keep: its MFU and HFU
// are checked against each other and against any CPU's peak; a step no CPU can run is refused.
TEST(RederiveFigures, HostCpuRowsAreBoundedByAnyCpu) {
  TrialRecord t;
  t.model = "pythia-14m";
  t.gpu = "cpu";
  t.config.micro_batch_size = 8;
  t.config.grad_acc_steps = 128;
  test::set_measured_step(t, 100.0);  // MFU and HFU 0: not known
  EXPECT_EQ(rederived(t), "");
  t.mfu = t.hfu = 0.3;  // of a peak of some TFLOP/s
  EXPECT_EQ(rederived(t), "");
  t.hfu = 0.4;
  EXPECT_NE(rederived(t).find("HFU 40.00% where MFU 30.00% makes it 30.00%"), std::string::npos)
      << rederived(t);
  TrialRecord fast = t;
  fast.mfu = fast.hfu = 0.0;
  test::set_measured_step(fast, 1e-6);
  EXPECT_NE(rederived(fast).find("faster than any CPU"), std::string::npos) << rederived(fast);
  fast.mfu = fast.hfu = 0.5;
  EXPECT_NE(rederived(fast).find("faster than any CPU"), std::string::npos) << rederived(fast);
  TrialRecord huge = t;
  huge.mfu = huge.hfu = 0.0;
  huge.measured.peak_memory_bytes = std::numeric_limits<int64_t>::max();
  EXPECT_NE(rederived(huge).find("above the 1048576.0 GiB of any host CPU"), std::string::npos)
      << rederived(huge);
}

// The stored figures of a row are never believed: a poisoned row is named once on stderr and
// never returned, and the next trial of its key replaces it.
TEST(ResultsDb, PoisonedRowsAreNeverUsed) {
  for (const char* poison :
       {"step_time_median_s = 1e-6, step_time_min_s = 1e-6, step_time_max_s = 1e-6",
        "peak_memory_bytes = 9223372036854775808.0",
        "mfu = mfu * 1.01",
        "tokens_per_s = tokens_per_s * 2",
        "training_days = training_days / 2"}) {
    const std::string path = test::fresh_path("poisoned.db");
    { open_db(path).insert(gpu_trial()); }
    test::exec_sql(path, std::string("UPDATE trials SET ") + poison);
    ResultsDb db = open_db(path, /*read_only=*/true);
    testing::internal::CaptureStderr();
    EXPECT_TRUE(db.query({}).empty()) << poison;
    EXPECT_FALSE(db.find(gpu_trial().key())) << poison;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;  // once, however often read
    EXPECT_NE(err.find("trial row 1 (pythia-160m on 8 x a100-80gb-sxm, plain, micro-batch 8, "
                       "accumulation 16) ignored: "),
              std::string::npos)
        << err;
    ResultsDb writer = open_db(path);
    EXPECT_TRUE(writer.insert(gpu_trial(3.0))) << poison;
    ASSERT_EQ(writer.query({}).size(), 1u) << poison;
  }
}

// Many bad rows: the first few named, one line each; the rest counted in one line.
TEST(ResultsDb, ManyBadRowsAreNamedFirstThenCounted) {
  const std::string path = test::fresh_path("many-bad.db");
  {
    ResultsDb db = open_db(path);
    for (int64_t micro : {1, 2, 4, 8, 16, 32, 64, 128}) {
      TrialRecord t = gpu_trial();
      t.config.micro_batch_size = micro;
      t.config.grad_acc_steps = 128 / micro;
      test::set_measured_step(t, 2.0);
      ASSERT_TRUE(db.insert(t));
    }
  }
  test::exec_sql(path, "UPDATE trials SET mfu = 0.99");
  testing::internal::CaptureStderr();
  EXPECT_TRUE(open_db(path, /*read_only=*/true).query({}).empty());
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 6) << err;
  EXPECT_NE(err.find(": 3 more invalid trial rows ignored\n"), std::string::npos) << err;
}

// Two models of one name are two models: a file's model named like a catalog model stores its
// own trials (and its model file, to re-derive them by) under its own digest.
TEST(ResultsDb, ModelsOfOneNameNeverShareTrials) {
  const std::string path = test::fresh_path("same-name.db");
  ModelSpec mine = catalog().model("pythia-160m");
  mine.arch.n_layers = 6;
  mine.source_path = "mine.toml";
  TrialRecord theirs_trial = gpu_trial(2.0);
  TrialRecord mine_trial = gpu_trial(1.0);
  test::derive_figures(mine_trial, mine);
  ASSERT_NE(mine_trial.key(), theirs_trial.key());
  {
    ResultsDb db = open_db(path);
    db.store_model(mine);
    EXPECT_TRUE(db.insert(theirs_trial));
    EXPECT_TRUE(db.insert(mine_trial));  // the same name and configuration: another key
  }
  ResultsDb db = open_db(path, /*read_only=*/true);
  const auto of = [&db](const ModelSpec& m) { return db.query({.model_digest = model_digest(m)}); };
  ASSERT_EQ(of(catalog().model("pythia-160m")).size(), 1u);
  EXPECT_DOUBLE_EQ(of(catalog().model("pythia-160m"))[0].step_time_s(), 2.0);
  ASSERT_EQ(of(mine).size(), 1u);
  EXPECT_DOUBLE_EQ(of(mine)[0].step_time_s(), 1.0);
  EXPECT_EQ(db.query({.model = "pythia-160m"}).size(), 2u);  // the name shows both
  // Without its stored model file, the file model's trial cannot be re-derived: never used.
  test::exec_sql(path, "DELETE FROM models");
  testing::internal::CaptureStderr();
  EXPECT_TRUE(
      open_db(path, /*read_only=*/true).query({.model_digest = model_digest(mine)}).empty());
  EXPECT_NE(testing::internal::GetCapturedStderr().find(
                "is neither stored in the file nor in the catalog"),
            std::string::npos);
}

// A schema-4 file: opened read-only, each row stands for the catalog model of its name; opened
// for writing, it is re-keyed by that model's digest in place. A row of a name no catalog model
// has is kept, flagged, and never used; repeats get the columns an older upgrade left out.
TEST(ResultsDb, Schema4IsReKeyedByTheCatalogModelOfItsName) {
  const std::string path = test::fresh_path("schema4.db");
  TrialRecord known = gpu_trial();
  TrialRecord unknown = gpu_trial();
  unknown.model = "my-model";
  test::write_old_results_db(path, 4, {known, unknown});
  const std::string before = test::read_file(path);
  testing::internal::CaptureStderr();
  {
    const auto rows = open_db(path, /*read_only=*/true).query({});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].model_digest, model_digest(catalog().model("pythia-160m")));
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("trial row 2 (my-model on 8 x a100-80gb-sxm"), std::string::npos) << err;
  EXPECT_NE(err.find("no catalog model has: its model is unknown (kept; bench it again with "
                     "--model-file to measure it)"),
            std::string::npos)
      << err;
  EXPECT_EQ(test::read_file(path), before);  // reading does not upgrade
  testing::internal::CaptureStderr();
  {
    ResultsDb db = open_db(path);
    ASSERT_TRUE(db.find(known.key()));  // under the digest's key now
    EXPECT_EQ(db.query({}).size(), 1u);
    TrialRecord again = known;
    EXPECT_FALSE(db.insert(again));  // a repeat, into the repeats table of schema 3
    EXPECT_EQ(db.repeat_count(known.key()), 1);
  }
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(column_of(path, "PRAGMA user_version"), std::vector<std::string>{"6"});
  EXPECT_EQ(column_of(path, "SELECT trial_key FROM trials ORDER BY id"),
            (std::vector<std::string>{known.key(),
                                      "my-model|a100-80gb-sxm|1x8|fl=0|ckpt=0|none|"
                                      "offload=0|mb=8|acc=16|mem=0"}));
  EXPECT_EQ(column_of(path, "SELECT digest FROM models"),
            std::vector<std::string>{model_digest(catalog().model("pythia-160m"))});
}

// A file with gpudays' stamp but without one of its tables or columns (dropped by hand) is refused
// in one line when opened, for reading or writing, and left as it is.
TEST(ResultsDb, AStampedFileWithoutATableOrColumnIsRefused) {
  for (const auto& [drop, message] :
       {std::pair<std::string, std::string>{"ALTER TABLE trials DROP COLUMN mfu",
                                            "whose table 'trials' lacks the column 'mfu'"},
        {"ALTER TABLE repeats DROP COLUMN status",
         "whose table 'repeats' lacks the column 'status'"},
        {"DROP TABLE models", "without its table 'models'"},
        {"DROP TABLE trials", "without its table 'trials'"}}) {
    const std::string path = test::fresh_path("dropped.db");
    { open_db(path).insert(gpu_trial()); }
    test::exec_sql(path, drop);
    const std::string before = test::read_file(path);
    for (bool read_only : {false, true}) {
      const std::string error = open_error(path, read_only);
      EXPECT_NE(error.find(path + " is a gpudays results database (schema 6) " + message +
                           " (edited or damaged); left untouched"),
                std::string::npos)
          << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
    EXPECT_EQ(test::read_file(path), before);
  }
}

}  // namespace
}  // namespace gpudays
