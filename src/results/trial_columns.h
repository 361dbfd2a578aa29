// The trials table's columns, declared once: name, SQL type, and how each maps to a TrialRecord
// field, the schema version that added it and the value older rows read. The schema, the insert,
// the select and the upgrade of older databases are all generated from this list.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "results/trial_record.h"

struct sqlite3_stmt;

namespace gpudays {

struct TrialColumn {
  const char* name;
  const char* sql_type;
  int since_version;        // the results schema that added the column
  const char* default_sql;  // what rows written before it read
  std::function<void(sqlite3_stmt*, int, const TrialRecord&)> bind;
  std::function<void(sqlite3_stmt*, int, TrialRecord&)> read;
};

const std::vector<TrialColumn>& trial_columns();

}  // namespace gpudays
