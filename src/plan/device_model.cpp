// DeviceModel: per-operation roofline.
#include "plan/device_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "catalog/gpu_peak.h"
#include "common/units.h"

namespace gpudays {
namespace {

double shape_factor(double dim, double half) {
  return dim / (dim + half);
}

// The head dimension the fused attention's rates hold at (the Hopper figures' and the larger of
// the A100 ranges' two).
constexpr double kReferenceHeadDim = 128.0;

}  // namespace

std::string sm_name(double compute_capability) {
  return fmt::format("sm_{}", static_cast<int>(std::lround(compute_capability * 10.0)));
}

DeviceModel::DeviceModel(const GpuSpec& gpu,
                         Precision precision,
                         bool free_lunch,
                         DeviceModelConstants constants,
                         bool tf32)
    : gpu_(&gpu), c_(constants) {
  const MatmulPeak peak = matmul_peak(gpu, precision, free_lunch || tf32);
  peak_flops_ = peak.tflops * kTera;
  ceiling_fraction_ = peak.ceiling_fraction;
  matmul_dtype_ = peak.dtype;
  // CUDA graphs replay kernels on a GPU; on the host CPU every operation is dispatched eagerly.
  const bool graphs = free_lunch && gpu.kind == DeviceKind::kGpu;
  half_dim_ = gpu.kind == DeviceKind::kCpu ? c_.cpu_matmul_half_dim : c_.matmul_half_dim;
  dispatch_s_ = graphs ? c_.graph_dispatch_s : c_.eager_dispatch_s;
  const auto fraction = c_.matmul_fraction_of_ceiling.find(sm_name(gpu.compute_capability));
  if (fraction != c_.matmul_fraction_of_ceiling.end()) matmul_fraction_ = fraction->second;
}

double DeviceModel::bandwidth_bytes_per_s() const {
  return gpu_->memory_bandwidth_gb_per_s * kGB * c_.memory_efficiency;
}

double DeviceModel::matmul_efficiency(const Op& op) const {
  const double h = half_dim_;
  return ceiling_fraction_ * matmul_fraction_ * shape_factor(op.m, h) * shape_factor(op.n, h) *
         shape_factor(op.k, h);
}

// FlashAttention-2's midpoints on the A100 hold for every kernel before Hopper (torch's SDPA runs
// FlashAttention-2 there) and for cuDNN's on Hopper and Blackwell (sm_90, sm_100), whose tensor
// cores need their own instructions: there FlashAttention's kernels, written for Ampere's
// mma.sync, reach a lower fraction of the ceiling, never above the best that was measured. (A
// consumer Blackwell, sm_120, keeps mma.sync: planned as before Hopper.)
double DeviceModel::fused_attention_fraction(const Op& op, bool backward) const {
  const double cc = gpu_->compute_capability;
  const bool warpgroup_tensor_cores = gpu_->kind == DeviceKind::kGpu && cc >= 9.0 && cc < 11.0;
  double fraction = (backward ? c_.fused_attention_backward : c_.fused_attention_forward) *
                    c_.fused_attention_scale;
  if (warpgroup_tensor_cores && op.attention_kernel != AttentionKernel::kCudnn) {
    const double measured =
        cc >= 10.0 ? c_.flash_attention_2_blackwell : c_.flash_attention_2_hopper;
    fraction = measured * std::min(c_.fused_attention_scale, 1.0);
  }
  if (op.attention_kernel == AttentionKernel::kFlashAttention1) {
    fraction *= c_.flash_attention_1_relative;
  }
  return fraction;
}

// What only the host CPU pays on top of the roofline: the slow backward of a depthwise convolution
// (its forward runs at about the matmul rate, the floor).
double DeviceModel::host_only_s(const Op& op, bool backward) const {
  if (gpu_->kind != DeviceKind::kCpu || op.cls != OpClass::kDepthwiseConv || !backward) return 0.0;
  return op.exec_flops / (ceiling_flops() * c_.cpu_depthwise_input_grad_fraction) +
         op.exec_flops / (ceiling_flops() * c_.cpu_depthwise_weight_grad_fraction);
}

// The host CPU's depthwise convolution traffic, as planned since the project began (its slow
// backward is host_only_s).
constexpr double kCpuDepthwisePasses = 3.0;

double DeviceModel::op_time_s(const Op& op, bool backward) const {
  const double factor = backward ? op.backward_factor : 1.0;
  const double flops = op.exec_flops * factor;
  double compute_s = 0.0;
  switch (op.cls) {
    case OpClass::kMatmul:
      compute_s = flops / (peak_flops_ * matmul_efficiency(op));
      break;
    case OpClass::kFusedAttention: {
      // Flash attention tiles over the sequence, and its two products per tile are GEMMs whose
      // inner (QK^T) and outer (PV) dimension is the head's: short sequences and heads narrower
      // than 128 lose efficiency as a GEMM of those shapes does (FlashAttention-2, Figs. 4-7:
      // head dimension 64 slower than 128 at every length; its rates are at 128).
      const double fraction = fused_attention_fraction(op, backward);
      const double sequence = shape_factor(op.m, half_dim_);
      const double head =
          shape_factor(op.k, half_dim_) / shape_factor(kReferenceHeadDim, half_dim_);
      compute_s = flops / (ceiling_flops() * sequence * head * fraction);
      break;
    }
    case OpClass::kVector:
      compute_s = flops / (gpu_->peak_fp32_tflops * kTera *
                           (gpu_->kind == DeviceKind::kCpu ? c_.vector_efficiency
                                                           : c_.cuda_scan_efficiency));
      break;
    case OpClass::kMemory:
    case OpClass::kDepthwiseConv:
      break;  // arithmetic hidden under memory traffic (on a GPU)
  }
  // No operation executes faster than the matmul ceiling: a CPU's bf16 matmuls can be slower than
  // its fp32 vector arithmetic, or than the arithmetic memory traffic hides. A power limit slows
  // every arithmetic unit with the clock.
  compute_s = std::max(compute_s, flops / ceiling_flops()) / gpu_->compute_clock_factor();
  // A depthwise convolution's op moves its input and output once; a GPU's kernels, more.
  const double passes = !op.depthwise_2d                 ? 1.0
                        : gpu_->kind != DeviceKind::kCpu ? c_.depthwise_passes
                                                         : kCpuDepthwisePasses;
  const double memory_s =
      passes * (backward ? op.backward_traffic() : op.bytes) / bandwidth_bytes_per_s();
  const double launches = backward ? op.backward_launches() : op.kernels;
  // The host CPU dispatches an operation and then runs it on the same thread: the sum, with one
  // BLAS call per GEMM of a batched matmul. A GPU runs kernels while the host issues the next
  // ones (op_host_s; workload_summary.cpp queues the two).
  if (gpu_->kind == DeviceKind::kCpu) {
    const double calls = launches * std::max(1.0, op.batch);
    return std::max(compute_s, memory_s) + calls * dispatch_s_ + host_only_s(op, backward);
  }
  const double overhead_s = op.cls == OpClass::kMemory ? launches * c_.kernel_overhead_s : 0.0;
  return std::max(compute_s, memory_s + overhead_s);
}

double DeviceModel::host_dispatch_s(bool python) const {
  return python ? c_.python_dispatch_s : dispatch_s_;
}

double DeviceModel::op_host_s(const Op& op, bool backward, bool python_forward) const {
  if (gpu_->kind == DeviceKind::kCpu) return 0.0;
  if (backward) {
    // Autograd's engine launches backward kernels from C++; a Python stack replays no graph.
    const double per_kernel = python_forward ? c_.eager_dispatch_s : dispatch_s_;
    return op.backward_launches() * per_kernel;
  }
  return op.kernels * host_dispatch_s(python_forward);
}

}  // namespace gpudays
