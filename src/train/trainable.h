// A zoo model made trainable by the engine on synthetic data, as the reference benchmarks: its
// parameters, and the loss of any slice of the synthetic global dataset (sample i is the same on
// every rank and micro-batch). The methods that live inside the forward are applied here from
// outside the model: the fused kernels (free-lunch) and activation checkpointing (block runner).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "catalog/model_spec.h"

namespace gpudays {

struct TrainableOptions {
  bool fused_kernels = false;             // fused attention / fast scan
  bool activation_checkpointing = false;  // per block
  uint64_t data_seed = 1234;
};

class Trainable {
 public:
  virtual ~Trainable() = default;
  virtual std::vector<at::Tensor> parameters() = 0;
  // The loss of samples [first, first + count) of the synthetic dataset.
  virtual at::Tensor micro_loss(int64_t first_sample, int64_t count) = 0;
};

// Throws InputError for a family the engine cannot train yet.
std::unique_ptr<Trainable> make_trainable(const ModelSpec& model, const TrainableOptions& options);

// Synthetic token sequences: samples [first, first + count) of `seq_len` tokens in [0, vocab).
// tokens: [count, seq_len] int64
at::Tensor synthetic_tokens(int64_t first, int64_t count, int64_t seq_len, int64_t vocab,
                            uint64_t seed);

}  // namespace gpudays
