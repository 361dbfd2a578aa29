// Roofline timing of one workload operation on one GPU: matmuls at a shape-dependent efficiency
// bounded by the GPU's measured matmul ceiling, memory-bound operations at achievable bandwidth,
// and a per-kernel dispatch floor (eager launches, or CUDA-graph replay under free-lunch on a GPU;
// the host CPU has no graphs).
#pragma once

#include <map>
#include <string>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/workload.h"

namespace gpudays {

// Modelling constants; docs/planner.md gives the reasoning and sources for each.
struct DeviceModelConstants {
  double memory_efficiency = 0.85;  // achievable fraction of memory bandwidth
  double matmul_half_dim = 128.0;   // a GEMM dimension of this size halves efficiency
  // The same on the host CPU, whose GEMMs need no large tiles to fill the device: measured with
  // LibTorch on one thread of the development machine's AMD EPYC (docs/planner.md, "The host
  // CPU"), [4096 x n] x [n x n] runs at 0.75, 0.87, 0.96 and 0.98 of a 1024^3 GEMM's rate for
  // n = 16, 32, 64 and 128; x / (x + 2) per dimension gives 0.79, 0.89, 0.94 and 0.97.
  double cpu_matmul_half_dim = 2.0;
  // Fraction of the matmul ceiling: FlashAttention-2 (Dao 2023) reaches 50-73% of the A100's peak
  // forward and 40-63% backward, i.e. 0.57-0.84 and 0.46-0.72 of its ceiling; midpoints.
  double fused_attention_forward = 0.70;
  double fused_attention_backward = 0.59;
  // Multiplies both (fitted: configs/calibration.toml); FlashAttention-2's Hopper figure below
  // only when under 1, as that figure is the best measured.
  double fused_attention_scale = 1.0;
  // FlashAttention-2 on Hopper and later, forward and backward: its Ampere instructions (mma.sync,
  // no TMA) reach "up to 335 TFLOPs/s" forward and backward on an H100 SXM5 (Dao 2023, Sec. 4.1,
  // Fig. 7), 0.42 of its 794.5 ceiling; torch's SDPA "flash" backend measured 329 TFLOPs/s
  // forward there (1 x 24 heads x 4,608 tokens x 128, bf16; pytorch/pytorch#142132) where cuDNN's
  // kernels ran 631. cuDNN's (and FlashAttention-3's) keep the midpoints above on Hopper.
  double flash_attention_2_hopper = 0.42;
  // The same on Blackwell (compute capability 10.x), whose mma.sync path runs no faster than
  // Hopper's: FlashAttention-2 on a B200, bf16, non-causal, measured 352-362 TFLOPs/s forward at
  // head dimension 128 and 2,048-8,192 tokens (meta-pytorch/tritonbench PR 171); as Hopper's
  // figure, the best at head dimension 128 against the ceiling: 362 / 1,745 = 0.21. (flash-attn
  // 2.7.4 at head dimension 64: 307-381 forward and 302-334 backward at 2,048-16,384 tokens,
  // Dao-AILab/flash-attention#1589, no slower than at 128, where the head-dimension factor
  // plans it 0.67 as fast.) Planned as Hopper's 0.42 until 2026-12-04: twice what was measured.
  double flash_attention_2_blackwell = 0.21;
  // The first FlashAttention against FlashAttention-2: "around 2x" slower (Dao 2023, abstract:
  // 25-40% of the A100's peak against 50-73%).
  double flash_attention_1_relative = 0.5;
  // Achieved fraction of the matmul ceiling by training GEMMs, per GPU generation (sm_name of the
  // compute capability, e.g. "sm_80"); 1.0 for a generation not listed. Fitted to published
  // measurements (configs/calibration.toml); never above 1, so never above the ceiling.
  std::map<std::string, double> matmul_fraction_of_ceiling;
  // The fused selective scan on the host CPU (the engine's kernel): fraction of the FP32 peak.
  double vector_efficiency = 0.5;
  // mamba-ssm's fused CUDA selective scan, as a fraction of the FP32 CUDA-core peak: Gu and Dao
  // 2023 ("Mamba", Sec. 4.5, Fig. 8 "Training", App. E.5) measure it faster than causal
  // FlashAttention-2 beyond 2,048 tokens (width 1,024, state 16, batch 1, bf16, A100 80GB PCIe),
  // causal being "about 1.7x faster" than non-causal. With this model's FlashAttention-2 (0.70 /
  // 0.59 of the ceiling, times the 0.80 fitted when this was derived) and the scan's 9 L D N FLOPs
  // forward and 2.5 times that backward, that crossing gives 0.19; the paper's "up to 7x faster at
  // 32K" gives 0.08 (docs/planner.md, "Mamba").
  double cuda_scan_efficiency = 0.19;
  // The host CPU, measured with LibTorch on one thread of the development machine's AMD EPYC
  // (tools/cpu_op_bench.cpp; docs/planner.md, "The host CPU").
  // Depthwise convolution backward on the CPU, as fractions of the matmul rate the probe
  // measures: the input gradient runs at 0.38-1.07 of it, the weight gradient on ATen's slow
  // per-channel path at 0.024-0.038 (7x7, 4-16 pixels wide, 16-128 channels).
  // A GPU's depthwise 7x7 convolution: its traffic as passes over input and output per direction
  // (poor reuse and halo reads; no public measurement of cuDNN's kernels found: the project's
  // first guess, 3, until the fit sets it; docs/planner.md, "Backward traffic as the code moves
  // it").
  double depthwise_passes = 3.0;
  double cpu_depthwise_input_grad_fraction = 0.7;
  double cpu_depthwise_weight_grad_fraction = 0.03;
  // The host's time to issue one kernel (docs/planner.md, "Host and GPU"): from C++ (the
  // engine's LibTorch calls, and autograd's backward in every stack), from Python model code
  // (an eager nn.Module forward: the interpreter, the module call and torch's Python binding on
  // top of the C++ dispatch), and as a CUDA-graph replay.
  double eager_dispatch_s = 5e-6;
  double python_dispatch_s = 10e-6;
  double graph_dispatch_s = 1e-6;
  // The GPU's own time per memory-bound kernel beyond its bytes: the launch latency and the ramp
  // and tail of a kernel too short to keep every memory channel busy.
  double kernel_overhead_s = 0.0;
};

// "sm_80" for compute capability 8.0, "sm_86" for 8.6.
std::string sm_name(double compute_capability);

class DeviceModel {
 public:
  // tf32: fp32 matmuls in TF32 without free-lunch (on a GPU with TF32), as some published
  // training code runs them.
  DeviceModel(const GpuSpec& gpu,
              Precision precision,
              bool free_lunch,
              DeviceModelConstants constants = {},
              bool tf32 = false);

  // The device's time for an operation (on a GPU the kernels alone; the host CPU dispatches and
  // runs them on one thread, so its time includes the dispatch).
  double op_time_s(const Op& op, bool backward) const;
  // The host's time to issue the operation's kernels to a GPU (zero on the host CPU, whose
  // dispatch is in op_time_s): python_forward when eager Python model code runs the forward;
  // backward is autograd's C++ engine either way.
  double op_host_s(const Op& op, bool backward, bool python_forward) const;
  double peak_flops() const { return peak_flops_; }  // dense peak of the matmul dtype, FLOP/s
  // The best measured matmul of the dtype, as a fraction of its peak, and in FLOP/s.
  double ceiling_fraction() const { return ceiling_fraction_; }
  double ceiling_flops() const { return peak_flops_ * ceiling_fraction_; }
  double matmul_fraction_of_ceiling() const { return matmul_fraction_; }
  double bandwidth_bytes_per_s() const;
  const char* matmul_dtype() const { return matmul_dtype_; }
  double dispatch_s() const { return dispatch_s_; }  // per kernel launch from C++ (or a graph)
  // Per kernel launched by the host: from Python (model code, an optimizer's Python loop) or as
  // the engine does (dispatch_s).
  double host_dispatch_s(bool python) const;

 private:
  double matmul_efficiency(const Op& op) const;
  // A fused attention's fraction of the matmul ceiling, before its sequence's shape factor.
  double fused_attention_fraction(const Op& op, bool backward) const;
  double host_only_s(const Op& op, bool backward) const;  // zero on a GPU
  const GpuSpec* gpu_;
  DeviceModelConstants c_;
  double half_dim_ = 0.0;  // the matmul half dimension of this device's kind
  double peak_flops_ = 0.0;
  double ceiling_fraction_ = 0.0;
  double dispatch_s_ = 0.0;
  double matmul_fraction_ = 1.0;  // of the ceiling, for this GPU's generation
  const char* matmul_dtype_ = "";
};

}  // namespace gpudays
