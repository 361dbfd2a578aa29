// The communicator a launch implies: single process, Gloo over the launch's store, or NCCL whose
// unique id travels over that Gloo group.
#include "dist/world.h"

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

std::unique_ptr<Communicator> make_communicator(RankDevice device,
                                                int cuda_device,
                                                const WorldOptions& options) {
  const Rendezvous rendezvous = rendezvous_from_environment();
  if (rendezvous.ranks.world_size == 1) return make_single_process_communicator();
  std::unique_ptr<Communicator> gloo = make_gloo_communicator(rendezvous, options);
  if (device == RankDevice::kCpu) return gloo;
  // NCCL needs Gloo only to carry its unique id from rank 0.
  return make_nccl_communicator(*gloo, cuda_device);
}

}  // namespace gpudays
