// What `gpudays bench` prints when its sweep ends: the trials run and reused, the method sets
// the planner skipped or pruned, and the fastest configuration with its training days; as text
// or one JSON document.
#pragma once

#include <ostream>
#include <string>

#include "catalog/model_spec.h"
#include "sweep/sweep.h"

namespace gpudays {

void print_sweep_summary(std::ostream& out,
                         bool json,
                         const std::string& db,
                         const ModelSpec& model,
                         const SweepSummary& summary);

}  // namespace gpudays
