// How a model's trunk runs its repeated blocks (transformer layers, ConvNeXt blocks, Mamba blocks).
// By default a trunk calls each block; the training engine may substitute a runner (activation
// checkpointing does). Model code stays unaware of what the runner does.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace gpudays::models {

// hidden: [..] -> hidden: [..], with the block's own parameters. A runner may call it again later
// (recomputation during backward), so it must capture what it uses by value.
using Block = std::function<at::Tensor(const at::Tensor&)>;
// Runs block number `index` (0-based, in the order the trunk runs them) on `hidden`; an empty
// runner means block(hidden).
using BlockRunner =
    std::function<at::Tensor(int64_t index, const Block& block, const at::Tensor& hidden)>;

inline at::Tensor run_block(const BlockRunner& runner,
                            int64_t index,
                            const Block& block,
                            const at::Tensor& hidden) {
  return runner ? runner(index, block, hidden) : block(hidden);
}

// The parameters of each repeated block, indexed as the runner's `index`.
using BlockParameters = std::vector<std::vector<at::Tensor>>;

}  // namespace gpudays::models
