// Exact parameter counts of the catalog's architectures, computed from shapes (nothing is
// allocated), equal to the corresponding HuggingFace model classes' num_parameters().
#pragma once

#include <cstdint>

#include "catalog/model_spec.h"

namespace gpudays {

struct ParamCounts {
  int64_t total = 0;          // every trainable parameter, tied weights once
  int64_t embedding = 0;      // input token/position/patch-free embedding tables
  int64_t unembedding = 0;    // output projection to the vocabulary or classes (tied: shared)
  int64_t largest_block = 0;  // the largest repeated block (transformer layer, ConvNeXt block)
  // The largest single parameter tensor (a vocabulary table in a language model), elements: what
  // an optimizer that updates one tensor at a time sizes its buffers by.
  int64_t largest_tensor = 0;
  // Input embedding tables that the output does not share (untied token embeddings, position and
  // token-type tables): backward computes their gradients last, after every block's.
  int64_t input_only_embedding = 0;
  int64_t non_embedding() const { return total - embedding; }
};

ParamCounts count_params(const ModelSpec& model);

}  // namespace gpudays
