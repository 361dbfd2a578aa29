// How `gpudays validate` shows its peak-memory check (accuracy/memory_check.h).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "accuracy/validate.h"

namespace gpudays {

// One line per case with a published peak, then the summary; nothing when there is none.
void print_memory_check(std::ostream& out, const ValidationReport& report);
nlohmann::json memory_check_json(const ValidationReport& report);

}  // namespace gpudays
