// Opens the c10d key-value store a rendezvous names (internal to src/distributed/c10d).
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <exception>
#include <string>

#include "distributed/rendezvous.h"
#include "distributed/world.h"

namespace gpudays {

// A TCP store (rank 0 serves it unless the launcher does) under the rendezvous' key prefix. A file
// store only carries the address of a TCP store rank 0 opens on a free port, so the file stays
// small and is removed once every rank has read it.
c10::intrusive_ptr<c10d::Store> open_store(const Rendezvous& rendezvous,
                                           std::chrono::milliseconds timeout);

// What a file store carries: rank 0's TCP store address, stamped with when it was written
// ("host:port@nanoseconds since the epoch").
std::string stamped_address(const std::string& address,
                            std::chrono::system_clock::time_point written);
// Reads the address under `key`, taking only one written within `timeout` of now (the ranks of one
// world meet within it) and waiting for such a one until `timeout` has passed: a run that
// crashed under the same job id leaves its file, and its stale address, behind. EnvironmentError
// (one line: the file, the stale entry's age, what to do) when none comes.
std::string read_fresh_address(c10d::Store& file,
                               const std::string& key,
                               const std::string& path,
                               std::chrono::milliseconds timeout);

// Counts this rank in at the store and waits until every rank has: EnvironmentError (one line:
// how many arrived, the store) when they have not within the rendezvous timeout.
void await_every_rank(c10d::Store& store,
                      const Rendezvous& rendezvous,
                      const WorldOptions& options);

// The one line for ranks that did not all meet within the rendezvous timeout (c10d's error `e`
// reduced to its first line): this rank, the store, and what to look at.
std::string rendezvous_failure(const Rendezvous& rendezvous,
                               const WorldOptions& options,
                               const std::exception& e);

}  // namespace gpudays
