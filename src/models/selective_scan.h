// Mamba-1's selective scan in two selectable implementations: plain (one ATen step per token, as
// HuggingFace's slow path: the obviously-correct reference) and fused (a CPU kernel with its own
// backward). Projections, the D skip and the gate belong to the mixer (mamba.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace gpudays::models {

enum class ScanKind { kPlain, kFused };

std::string to_string(ScanKind kind);
ScanKind parse_scan_kind(const std::string& text);  // throws InputError naming the choices

// The selective state space recurrence, per batch b, channel d and state n, from h_{-1} = 0:
//   h_t = exp(delta_t A) h_{t-1} + (delta_t B_t) u_t,   y_t = sum_n C_t h_t
// u, delta: [B, D, T] (delta after softplus); A: [D, N]; Bs, Cs: [B, T, N] -> y: [B, D, T].
// All inputs share one floating dtype (fp32 or fp64; the mixer promotes reduced precisions).
// kPlain runs on any device; kFused needs CPU tensors (InputError otherwise).
at::Tensor selective_scan(const at::Tensor& u,
                          const at::Tensor& delta,
                          const at::Tensor& A,
                          const at::Tensor& Bs,
                          const at::Tensor& Cs,
                          ScanKind kind);

// The fused CPU kernel alone (selective_scan_cpu.cpp): parallel over channels, sequential in time,
// state in registers; the backward recomputes the states rather than storing them.
at::Tensor selective_scan_fused_cpu(const at::Tensor& u,
                                    const at::Tensor& delta,
                                    const at::Tensor& A,
                                    const at::Tensor& Bs,
                                    const at::Tensor& Cs);

}  // namespace gpudays::models
