// The communicator of this launch, over PyTorch's own engine, c10d: the single-process one for one
// rank; several ranks meet at the store their launcher implies (distributed/rendezvous.h) and talk
// through Gloo (CPU memory) or NCCL (CUDA memory). The header is torch-free; the implementation
// (src/distributed/c10d, library gpudays_distributed_c10d) links LibTorch.
#pragma once

#include <memory>

#include "distributed/communicator.h"
#include "distributed/launcher.h"
#include "distributed/rendezvous.h"

namespace gpudays {

struct WorldOptions {
  // A rank that does not join a collective within this time fails it on every rank that waits,
  // with the missing rank named (c10d's own default is 30 min; a trial has its own time limit).
  double collective_timeout_s = 600;
  // Connecting to the store and to every other rank.
  double rendezvous_timeout_s = 300;
};
// The defaults, with GPUDAYS_COLLECTIVE_TIMEOUT_S and GPUDAYS_RENDEZVOUS_TIMEOUT_S (seconds) when
// set. Throws InputError for a value that is not a positive number.
WorldOptions world_options_from_environment();

// This launch's communicator for a rank computing on `device` (CUDA: on `cuda_device`). Throws
// InputError for an inconsistent launch environment, EnvironmentError (one line naming the store)
// when CPU ranks do not meet within the rendezvous timeout, and std::runtime_error when the build
// lacks NCCL for CUDA ranks.
std::unique_ptr<Communicator> make_communicator(RankDevice device,
                                                int cuda_device,
                                                const WorldOptions& options = {});

// Gloo over CPU buffers among the ranks of `rendezvous` (at least 2). Collectives are blocking;
// when one fails (a peer gone, or the timeout), the error names the operation, this rank, and the
// ranks that never reached it, read from the store where each rank counts its collectives.
std::unique_ptr<Communicator> make_gloo_communicator(const Rendezvous& rendezvous,
                                                     const WorldOptions& options);

// NCCL over CUDA buffers among the ranks of `rendezvous`, one GPU (`cuda_device`) per rank,
// through c10d's ProcessGroupNCCL (CUDA builds; elsewhere it throws std::runtime_error saying what
// to build). One rank meets in an in-memory store. Collectives return once queued: later work on
// the caller's current CUDA stream waits for them; host buffers hold the result on return. A
// collective that exceeds the timeout ends the process (c10d's watchdog), naming it on stderr.
std::unique_ptr<Communicator> make_nccl_communicator(const Rendezvous& rendezvous,
                                                     int cuda_device,
                                                     const WorldOptions& options);
bool nccl_available();

}  // namespace gpudays
