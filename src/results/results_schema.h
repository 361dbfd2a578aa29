// The results file's schema, for results_db.cpp alone: its tables made from the column list
// (trial_columns.h), the check that a stamped file has every table and column of its version, and
// the upgrade of an older file in place. Also the SQLite statement helpers both files use.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "catalog/model_spec.h"

namespace gpudays {

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

// Both throw std::runtime_error with SQLite's message and the statement.
Stmt prepare(sqlite3* db, const std::string& sql);
void exec(sqlite3* db, const std::string& sql);

inline constexpr int kApplicationId = 0x47505544;  // "GPUD"
// 2: composed-parts timing columns; 3: the repeats table; 4: peak reserved memory, CUDA graph
// use and the selective scan that ran; 5: the model's digest, and the models table; 6: the
// measurement rule. Each later version adds columns, whose since_version (trial_columns.cpp) sets
// it.
int64_t schema_version();
inline constexpr int64_t kModelDigestSchema = 5;
// The schema that added the measurement rule: every row of an older file is of the gpudays rule.
inline constexpr int64_t kRuleSchema = 6;

// "model, gpu, ...": every column, in the list's order.
std::string column_list();
// The select list for a file of schema `version`: columns it lacks read as their defaults.
std::string select_list(int64_t version);

// A fresh file's tables, stamped with the application id and the schema version.
void create_schema(sqlite3* db);

// Throws InputError naming the first table or column that a file stamped with `version` lacks (a
// table dropped or a column removed by hand): one line, before anything reads or writes it.
void check_tables(sqlite3* db, const std::string& path, int64_t version);

// The catalog model a name of an older schema stands for (the name the sweep stored: exact), or
// nullptr when the catalog has none.
using CatalogModel = std::function<const ModelSpec*(const std::string& name)>;

// Upgrades a file of `version` to the current schema in one transaction: the columns it lacks
// (with their defaults) in trials and repeats, the repeats table before 3, and from 5 the models
// table and each row's digest from the catalog model of its name (its key re-made with it); a
// row whose name no catalog model has keeps an empty digest and its old key: kept, never used.
void upgrade_schema(sqlite3* db, int64_t version, const CatalogModel& catalog_model);

// Keeps `model` (its model file, under its digest) for readers to re-derive its trials.
void store_model_row(sqlite3* db, const ModelSpec& model);

}  // namespace gpudays
