// The per-step work of 2020-era fp16 optimizers, read from their code (docs/planner.md, "fp16
// optimizers of 2020"):
//   Megatron-LM's FP16_Optimizer (megatron/fp16 at 5281919, 2020-09): update_master_grads checks
//   every fp16 gradient for inf/NaN with DynamicLossScaler._has_inf_or_nan, float(x.float().sum())
//   (an fp32 copy, a sum, the scalar to the host); clip_master_grads sums the norm of every fp32
//   master gradient with mpu.clip_grad_norm, p.grad.data.norm(2) and .item(); its local DDP
//   (megatron/model/distributed.py) all-reduces the gradients after the whole backward.
//   DeepSpeed's ZeRO stage 1 (deepspeed/runtime/zero/stage1.py at 6bb5c69, 2020-09):
//   reduce_scatter_gradients, called after the whole backward, flattens every rank's share of the
//   gradients into new buffers, reduce-scatters them and scales every share; step() checks every
//   gradient of the model (not only its own shard) with CheckOverflow, float(x.float().sum()), and
//   takes the norm of every gradient with get_grad_norm, p.grad.data.float().norm(2) and .item();
//   its own shard is copied back into the gradients and flattened into fp32 buffers.
#include "plan/fp16_optimizer.h"

#include "plan/workload.h"

namespace gpudays {

std::optional<Fp16Optimizer> parse_fp16_optimizer(std::string_view name) {
  if (name == "torch") return Fp16Optimizer::kTorch;
  if (name == "megatron_2020") return Fp16Optimizer::kMegatron2020;
  if (name == "deepspeed_zero1_2020") return Fp16Optimizer::kDeepSpeedZero1_2020;
  return std::nullopt;
}

std::string to_string(Fp16Optimizer code) {
  switch (code) {
    case Fp16Optimizer::kTorch:
      return "torch";
    case Fp16Optimizer::kMegatron2020:
      return "megatron_2020";
    case Fp16Optimizer::kDeepSpeedZero1_2020:
      return "deepspeed_zero1_2020";
  }
  return "torch";
}

Fp16OptimizerExtra fp16_optimizer_extra(Fp16Optimizer code,
                                        double params,
                                        int64_t param_tensors,
                                        int64_t layers,
                                        double gradient_bytes,
                                        double gpus) {
  constexpr double kFp32 = 4.0;
  const double g = gradient_bytes;
  const double tensors = static_cast<double>(param_tensors - 4 * layers);
  // float(x.float().sum()) per tensor: read g and write an fp32 copy, read it; three operations
  // from Python (the copy, the sum, the scalar's copy to the host), three kernels.
  const double check_bytes = g + 2.0 * kFp32;
  Fp16OptimizerExtra e;
  switch (code) {
    case Fp16Optimizer::kTorch:
      return e;
    case Fp16Optimizer::kMegatron2020:
      // The check on the fp16 gradients; the norm of each fp32 master gradient (read 4; the
      // norm and the scalar's copy).
      e.bytes = params * (check_bytes + kFp32);
      e.kernels = tensors * (3.0 + 2.0);
      e.python_ops = tensors * (3.0 + 2.0);
      e.serial_gradient_collectives = true;  // DDP_impl local: allreduce_params after backward
      return e;
    case Fp16Optimizer::kDeepSpeedZero1_2020: {
      // Every gradient flattened (read g, write g) and scaled (read g, write g); the check and
      // the norm (p.grad.float().norm(): the same passes as the check) over every gradient; the
      // own shard: its reduced share copied back (torch.cat and copy_: read and write g twice)
      // and flattened into fp32 beside the cast the planner charges (read 4, write 4).
      e.bytes = params * (4.0 * g + 2.0 * check_bytes) + params / gpus * (4.0 * g + 2.0 * kFp32);
      e.kernels = tensors * (3.0 + 3.0);
      e.python_ops = tensors * (3.0 + 3.0);
      e.serial_gradient_collectives = true;
      return e;
    }
  }
  return e;
}

double fp16_optimizer_extra_s(const Fp16OptimizerExtra& extra, const DeviceModel& device) {
  if (extra.bytes <= 0.0 && extra.python_ops <= 0.0) return 0.0;
  Op passes;
  passes.name = "fp16 optimizer checks";
  passes.cls = OpClass::kMemory;
  passes.bytes = extra.bytes;
  passes.kernels = extra.kernels;
  return device.op_time_s(passes, false) + extra.python_ops * device.host_dispatch_s(true);
}

}  // namespace gpudays
