// One training configuration of the search space: a method set, the micro-batch per GPU and the
// gradient accumulation steps. What the planner predicts, a trial measures and the trainer runs.
#pragma once

#include <cstdint>
#include <string>

#include "search_space/methods.h"

namespace gpudays {

struct Configuration {
  MethodSet methods;
  int64_t micro_batch_size = 1;  // samples per GPU per micro-step
  int64_t grad_acc_steps = 1;    // micro-steps per optimizer step
  bool operator==(const Configuration&) const = default;
};

// "free-lunch + zero_2, micro-batch 8, accumulation 4"
std::string describe(const Configuration& config);

}  // namespace gpudays
