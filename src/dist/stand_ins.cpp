// The NCCL engine's stand-in when gpudays is built without it: it says what to build. The engine
// itself is nccl_communicator.cpp.
#include <stdexcept>

#include "dist/communicator.h"

namespace gpudays {

#ifndef GPUDAYS_WITH_NCCL
std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, const NcclOptions&) {
  throw std::runtime_error(
      "this gpudays was built without NCCL (build the CUDA variant: make cuda)");
}
bool nccl_available() {
  return false;
}
#endif

}  // namespace gpudays
