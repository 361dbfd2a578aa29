// Opens the c10d key-value store a rendezvous names (internal to src/distributed/c10d).
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

#include "distributed/rendezvous.h"

namespace gpudays {

// A TCP store (rank 0 serves it unless the launcher does) under the rendezvous' key prefix. A file
// store only carries the address of a TCP store rank 0 opens on a free port, so the file stays
// small and is removed once every rank has read it.
c10::intrusive_ptr<c10d::Store> open_store(const Rendezvous& rendezvous,
                                           std::chrono::milliseconds timeout);

}  // namespace gpudays
