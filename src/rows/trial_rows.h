// The trial row: one stored benchmark trial (results/trial_record.h) as `gpudays results` and
// `gpudays best` print it in every format. The database's own columns are results/trial_columns;
// these carry the same names where they mean the same thing.
#pragma once

#include <vector>

#include "results/trial_record.h"
#include "rows/row_format.h"

namespace gpudays {

const std::vector<Column<TrialRecord>>& trial_row_columns();

}  // namespace gpudays
