// The communicator a launch implies: single process, or Gloo (CPU ranks) or NCCL (CUDA ranks) over
// the launch's store.
#include "distributed/world.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

namespace {

// The environment variable `name` as a positive number of seconds, or `fallback` when unset.
double seconds_from_environment(const char* name, double fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr) return fallback;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(value, &end);
  if (end == value || *end != '\0' || errno != 0 || !(seconds > 0)) {
    throw InputError(fmt::format("{}='{}' is not a positive number of seconds", name, value));
  }
  return seconds;
}

}  // namespace

WorldOptions world_options_from_environment() {
  WorldOptions options;
  options.collective_timeout_s =
      seconds_from_environment("GPUDAYS_COLLECTIVE_TIMEOUT_S", options.collective_timeout_s);
  options.rendezvous_timeout_s =
      seconds_from_environment("GPUDAYS_RENDEZVOUS_TIMEOUT_S", options.rendezvous_timeout_s);
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
