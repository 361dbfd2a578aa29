// Detects a multi-rank launch (mpirun, srun) from the launcher's environment, and provides the
// MPI and NCCL engines' stand-ins when gpudays is built without them.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "dist/communicator.h"

namespace gpudays {

bool launched_with_several_ranks() {
  // SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: a batch script's own shell sees the allocation's task
  // count but is one process; srun sets the step's.
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (const char* value = std::getenv(name); value != nullptr && std::atoi(value) > 1)
      return true;
  }
  return false;
}

int local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* value = std::getenv(name); value != nullptr) return std::atoi(value);
  }
  return 0;
}

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
