// The one place a method of the search space is switched on: a configuration, the recipe and the
// device become the model adapter's options (fused kernels, activation checkpointing) and the
// engine's options (precision, accumulation, sharding stage, offloading, fused AdamW, TF32, CUDA
// graphs). Model code knows nothing of methods; the engine knows mechanisms, not method names.
//
// Order of application, from the inside out (docs/engine.md):
//   1. fused kernels (free-lunch): the model's attention / selective scan, chosen at build time;
//   2. activation checkpointing: the trainable's block runner recomputes each block;
//   3. precision: autocast around the forward, fp16 loss scaling, bf16/fp16 working weights with
//      fp32 masters at stage >= 1;
//   4. gradient accumulation over the micro-steps;
//   5. sharding: the engine wraps the block runner (stage 2/3 per-block reduce, stage 3 gathers);
//   6. offloading: the optimizer's slice on the CPU;
//   7. free-lunch's engine parts: fused AdamW, TF32 matmuls, the micro-step as a CUDA graph (only
//      where nothing above hooks into the micro-step: no checkpointing, no sharding, a CUDA
//      device).
#pragma once

#include <cstdint>

#include "catalog/model_spec.h"
#include "engine/engine.h"
#include "engine/trainable.h"
#include "search_space/configuration.h"

namespace gpudays {

struct MethodOptions {
  TrainableOptions trainable;
  EngineOptions engine;
};

// Throws InputError when the configuration is invalid (search_space/search_space.h's rules are
// checked again by the engine against its world size and device).
MethodOptions apply_methods(const Configuration& config,
                            const RecipeSpec& recipe,
                            at::Device device,
                            uint64_t data_seed = 1234);

}  // namespace gpudays
