// Collectives behind one small interface, over raw buffers (the engine passes tensor storage).
// Engines: a single process (no collectives needed), and over c10d (distributed/world.h, which also
// makes the communicator of a launch) Gloo (CPU memory) and NCCL (CUDA memory; CUDA builds). Ring
// semantics as NCCL's: reduce_scatter leaves rank r with block r of the reduced buffer; all_gather
// concatenates blocks in rank order.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

// The launch this process belongs to (launched_with_several_ranks, local_rank).
#include "distributed/launcher.h"

namespace gpudays {

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt64 };
enum class ReduceOp { kSum, kMax };

size_t dtype_bytes(DType dtype);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string engine() const = 0;  // "single", "gloo", "nccl"

  // In place: every rank ends with the reduction of all ranks' buffers.
  virtual void all_reduce(void* buffer, size_t count, DType dtype, ReduceOp op) = 0;
  // `send` holds size() * recv_count elements; rank r receives the reduction of block r.
  virtual void reduce_scatter(
      const void* send, void* recv, size_t recv_count, DType dtype, ReduceOp op) = 0;
  // `recv` receives size() * send_count elements: every rank's `send`, in rank order.
  virtual void all_gather(const void* send, void* recv, size_t send_count, DType dtype) = 0;
  virtual void broadcast(void* buffer, size_t count, DType dtype, int root) = 0;
  virtual void barrier() = 0;
};

std::unique_ptr<Communicator> make_single_process_communicator();

}  // namespace gpudays
