// The trials table's columns, declared once: name, SQL type, and how each maps to a TrialRecord
// field, the schema version that added it and the value older rows read. The schema, the insert,
// the select and the upgrade of older databases are all generated from this list.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "results/trial_record.h"

struct sqlite3_stmt;

namespace gpudays {

struct TrialColumn {
  std::string name;
  std::string sql_type;
  int64_t since_version;    // the results schema that added the column
  std::string default_sql;  // what rows written before it read
  std::function<void(sqlite3_stmt*, int, const TrialRecord&)> bind;
  std::function<void(sqlite3_stmt*, int, TrialRecord&)> read;
};

const std::vector<TrialColumn>& trial_columns();

// The results schema these columns make: the newest column's since_version.
int64_t trial_columns_schema_version();

}  // namespace gpudays
