// The trials table's columns, declared once: name, SQL type, and how each maps to a TrialRecord
// field. The schema, the insert and the select are all generated from this list.
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
  std::function<void(sqlite3_stmt*, int, const TrialRecord&)> bind;
  std::function<void(sqlite3_stmt*, int, TrialRecord&)> read;
};

const std::vector<TrialColumn>& trial_columns();

}  // namespace gpudays
