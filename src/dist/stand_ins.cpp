// The MPI and NCCL engines' stand-ins when gpudays is built without them: each says what to
// install or build. The engines themselves are mpi_communicator.cpp and nccl_communicator.cpp.
#include <stdexcept>

#include "dist/communicator.h"

namespace gpudays {

#ifndef GPUDAYS_WITH_MPI
std::unique_ptr<Communicator> make_mpi_communicator() {
  throw std::runtime_error(
      "this gpudays was built without MPI (install libopenmpi-dev and rebuild)");
}
bool mpi_available() {
  return false;
}
#endif

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
