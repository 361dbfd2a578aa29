// `plan --ops`: the best configuration's operations as a table after the plan, or a JSON array.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/op_breakdown.h"

namespace gpudays {

void print_op_breakdown(std::ostream& out, const std::vector<OpTime>& ops, int64_t micro_batch);
nlohmann::json op_breakdown_json(const std::vector<OpTime>& ops);

}  // namespace gpudays
