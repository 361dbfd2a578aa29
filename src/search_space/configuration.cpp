// Configuration descriptions.
#include "search_space/configuration.h"

#include <fmt/format.h>

namespace gpudays {

std::string describe(const Configuration& c) {
  return fmt::format("{}, micro-batch {}, accumulation {}",
                     describe(c.methods),
                     c.micro_batch_size,
                     c.grad_acc_steps);
}

}  // namespace gpudays
