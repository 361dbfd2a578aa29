// The fp16 optimizers of 2020-era training code, whose per-step work the planner's own (torch's
// GradScaler and a fused update) does not have: an inf/NaN check and a gradient norm taken one
// tensor at a time, each ending in a host round-trip (docs/planner.md, "fp16 optimizers of
// 2020").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plan/device_model.h"

namespace gpudays {

enum class Fp16Optimizer {
  kTorch,               // GradScaler's multi-tensor unscale and check, torch's clip_grad_norm_
  kMegatron2020,        // Megatron-LM's FP16_Optimizer (megatron/fp16, 2020)
  kDeepSpeedZero1_2020  // DeepSpeed's ZeRO stage 1 fp16 optimizer (runtime/zero/stage1.py, 2020)
};

// "torch", "megatron_2020", "deepspeed_zero1_2020"; nullopt for any other name.
std::optional<Fp16Optimizer> parse_fp16_optimizer(std::string_view name);
std::string to_string(Fp16Optimizer code);

// What one optimizer step of the code does beyond the planner's own optimizer: its memory
// traffic, its kernels (a scalar's copy to the host counts as one) and the operations its Python
// loops issue, each loop iteration ending in a host round-trip (.item(), float()).
struct Fp16OptimizerExtra {
  double bytes = 0.0;
  double kernels = 0.0;
  double python_ops = 0.0;
  // The gradients reduced only after the whole backward (DeepSpeed's stage 1 reduce-scatter,
  // Megatron-LM's local DDP all-reduce): nothing hides the collective.
  bool serial_gradient_collectives = false;
};

// params: all of the model's parameters; param_tensors: their tensors as the engine holds them
// (layers of them in the repeated blocks); gradient_bytes: bytes per gradient element (2 for
// fp16); gpus: data-parallel ranks. Both 2020 codes run Megatron-LM's GPT-2, whose attention
// projects q, k and v with one query_key_value weight and bias: 4 tensors fewer per layer.
Fp16OptimizerExtra fp16_optimizer_extra(Fp16Optimizer code,
                                        double params,
                                        int64_t param_tensors,
                                        int64_t layers,
                                        double gradient_bytes,
                                        double gpus);

// The extra's time: the host and the GPU take turns (each round-trip waits for its kernels and
// the next tensor's kernels wait for the host), so the two add.
double fp16_optimizer_extra_s(const Fp16OptimizerExtra& extra, const DeviceModel& device);

}  // namespace gpudays
