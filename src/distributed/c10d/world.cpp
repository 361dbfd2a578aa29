// The communicator a launch implies: single process, or Gloo (CPU ranks) or NCCL (CUDA ranks) over
// the launch's store.
#include "distributed/world.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

WorldOptions world_options_from_environment() {
  WorldOptions options;
  const char* value = std::getenv("GPUDAYS_COLLECTIVE_TIMEOUT_S");
  if (value == nullptr) return options;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(value, &end);
  if (end == value || *end != '\0' || errno != 0 || !(seconds > 0)) {
    throw InputError(fmt::format(
        "GPUDAYS_COLLECTIVE_TIMEOUT_S='{}' is not a positive number of seconds", value));
  }
  options.collective_timeout_s = seconds;
  return options;
}

#ifndef GPUDAYS_WITH_GLOO
std::unique_ptr<Communicator> make_gloo_communicator(const Rendezvous&, const WorldOptions&) {
  throw EnvironmentError(
      "several ranks need Gloo, and this gpudays was built without its headers: install "
      "libgloo-dev (scripts/install-deps.sh) and rebuild");
}
#endif

#ifndef GPUDAYS_WITH_C10D_NCCL
std::unique_ptr<Communicator> make_nccl_communicator(const Rendezvous&, int, const WorldOptions&) {
  throw EnvironmentError(
      "CUDA ranks need NCCL, and this gpudays was built without it (build the CUDA variant: make "
      "cuda)");
}
bool nccl_available() {
  return false;
}
#endif

std::unique_ptr<Communicator> make_communicator(RankDevice device,
                                                int cuda_device,
                                                const WorldOptions& options) {
  const Rendezvous rendezvous = rendezvous_from_environment();
  if (rendezvous.ranks.world_size == 1) return make_single_process_communicator();
  if (device == RankDevice::kCpu) return make_gloo_communicator(rendezvous, options);
  return make_nccl_communicator(rendezvous, cuda_device, options);
}

}  // namespace gpudays
