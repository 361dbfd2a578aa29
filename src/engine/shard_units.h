// The parameters of a sharded model (stage >= 1), in units: each repeated block of the model is one
// unit, everything else (embeddings, stems, heads) one more. A unit's parameters become views into
// one flat working buffer (fp32, or bf16/fp16 for mixed precision as DeepSpeed keeps them); every
// rank updates an fp32 master slice of each unit. At stage 3 a unit's flat buffer holds storage
// only while gathered; released, its parameters keep their shapes over an empty storage.
//
// Per-rank model-state bytes with P parameters on N ranks (ZeRO paper, Section 5; padding aside):
//   stage 1: flat P·w + full gradient P·w + master 4P/N + Adam 8P/N
//   stage 2: flat P·w + gradient slice P·w/N + master 4P/N + Adam 8P/N
//   stage 3: working slice P·w/N + gradient slice P·w/N + master 4P/N + Adam 8P/N
// where w is the working dtype's size; in fp32 the master is the working slice itself (no copy).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "distributed/communicator.h"

namespace gpudays {

struct ShardUnit {
  std::vector<at::Tensor> params;  // views into `flat`
  int64_t numel = 0;
  int64_t padded = 0;     // numel rounded up to a multiple of the world size
  int64_t shard = 0;      // padded / world
  at::Tensor flat;        // [padded], working dtype; storage released at stage 3 when not in use
  at::Tensor flat_grad;   // stage 1: [padded] full gradient; the params' .grad are views into it
  at::Tensor grad_shard;  // [shard] this rank's reduced gradient, working dtype
  at::Tensor master;      // [shard] fp32 weights this rank updates (on the CPU when offloading)
  at::Tensor send;        // stage 3: [shard] working-dtype slice the gathers rebuild `flat` from
  bool gathered = true;
  bool reduced = false;  // this micro-step's gradient is already reduced
};

struct ShardConfig {
  int stage = 1;
  bool offload = false;
  at::ScalarType working_dtype = at::kFloat;
};

class ShardUnits {
 public:
  // Unit 0 holds the parameters in no block; unit i + 1 holds blocks[i]. Converts the parameters in
  // place (dtype, views into flat buffers) and, at stage 3, releases every unit.
  ShardUnits(const std::vector<at::Tensor>& params,
             const std::vector<std::vector<at::Tensor>>& blocks,
             Communicator& comm,
             ShardConfig config);

  std::vector<ShardUnit>& units() { return units_; }
  const std::vector<ShardUnit>& units() const { return units_; }
  ShardUnit& block_unit(int64_t block_index);
  const ShardConfig& config() const { return config_; }

  void gather(ShardUnit& u);   // stage 3: all-gather the unit's weights into its flat buffer
  void release(ShardUnit& u);  // stage 3: free the flat buffer's storage
  void gather_all();

  // Stage 1: full flat gradient buffers the parameters accumulate into (first micro-step).
  void attach_flat_grads();
  // Reduce-scatters the unit's gradient into its slice (stage 1 after the last micro-step; stage
  // 2/3 after every micro-step, adding to the slice) and frees the full gradient at stage >= 2.
  void reduce(ShardUnit& u);
  // After an update of the masters: writes them back to the working weights (stage 1/2: and
  // all-gathers the flat buffers; stage 3: into the send slices).
  void write_back();
  void clear_grads();  // every gradient, full and sliced

  std::vector<at::Tensor> masters() const;
  int64_t elements_per_rank() const;

 private:
  void init_unit(ShardUnit& u);
  void all_gather(const at::Tensor& send, const at::Tensor& flat);
  void reduce_scatter(const at::Tensor& full, const at::Tensor& part);
  DType comm_dtype() const;
  std::vector<ShardUnit> units_;
  Communicator& comm_;
  ShardConfig config_;
};

// The parameters' gradients, in order, as one flat buffer of `size` elements (at least their
// total; missing gradients and the rest are 0).
at::Tensor flatten_grads(const std::vector<at::Tensor>& params, int64_t size, at::ScalarType dtype);

// A host copy of `t` (as `dtype`): from a CUDA tensor into pinned memory, queued without waiting
// (synchronise the device before reading it); a CPU tensor is converted (no copy when it already
// has the dtype).
at::Tensor to_host(const at::Tensor& t, at::ScalarType dtype);
at::Tensor to_host(const at::Tensor& t);

// Sets a tensor's storage to `bytes` bytes (fresh, uninitialised) without touching its metadata or
// version counter, so autograd's saved references to it stay valid (stage-3 release and gather).
void resize_storage(const at::Tensor& t, size_t bytes);

}  // namespace gpudays
