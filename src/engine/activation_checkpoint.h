// Activation checkpointing of one block, applied from outside the model: the block runs without
// keeping its activations, and backward recomputes them with the random-number generator state
// and autocast state of the original forward, so the result equals the unchecked run.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace gpudays {

// One block of a model: hidden -> hidden, using the block's own parameters.
using BlockFn = std::function<at::Tensor(const at::Tensor&)>;

// input: [..] -> output: [..], as block(input), storing only `input` for backward.
at::Tensor checkpointed_block(const BlockFn& block, const at::Tensor& input);

}  // namespace gpudays
