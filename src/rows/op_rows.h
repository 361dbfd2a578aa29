// `plan --ops` and `validate --ops`: a configuration's operations as a table after the plan or the
// report, or a JSON array.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/op_breakdown.h"

namespace gpudays {

// `configuration`: which one, in words ("the best configuration").
void print_op_breakdown(std::ostream& out,
                        const std::vector<OpTime>& ops,
                        int64_t micro_batch,
                        const std::string& configuration);
nlohmann::json op_breakdown_json(const std::vector<OpTime>& ops);

}  // namespace gpudays
