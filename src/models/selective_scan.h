// Mamba-1's selective scan in three implementations: plain (one ATen step per token, as
// HuggingFace's slow path: the obviously-correct reference), fused (a CPU kernel with its own
// backward) and chunked (ATen operations only, for any device), and the choice among them by
// device. Projections, the D skip and the gate belong to the mixer (mamba.cpp).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace gpudays::models {

// kFused asks for the fast scan of the tensors' device (scan_for_device): the fused kernel on CPU
// tensors, the chunked scan elsewhere. kPlain and kChunked run as named on any device.
enum class ScanKind { kPlain, kFused, kChunked };

std::string to_string(ScanKind kind);               // "plain", "fused", "chunked"
ScanKind parse_scan_kind(const std::string& text);  // throws InputError naming the choices

// What runs for `requested` on tensors of `device`: never kFused off the CPU.
ScanKind scan_for_device(ScanKind requested, const c10::Device& device);
// Its name for a trial's record: "plain", "fused-cpu" or "chunked-aten".
std::string scan_implementation(ScanKind requested, const c10::Device& device);

// The selective state space recurrence, per batch b, channel d and state n, from h_{-1} = 0:
//   h_t = exp(delta_t A) h_{t-1} + (delta_t B_t) u_t,   y_t = sum_n C_t h_t
// u, delta: [B, D, T] (delta after softplus); A: [D, N]; Bs, Cs: [B, T, N] -> y: [B, D, T].
// All inputs share one floating dtype. The mixer promotes reduced precisions to fp32; the plain
// scan computes in the inputs' dtype, the fused one in fp32 or fp64 only, the chunked one in fp32
// for fp16 and bf16 inputs (returning their dtype). `kind` goes through scan_for_device.
at::Tensor selective_scan(const at::Tensor& u,
                          const at::Tensor& delta,
                          const at::Tensor& A,
                          const at::Tensor& Bs,
                          const at::Tensor& Cs,
                          ScanKind kind);

// The fused CPU kernel alone (selective_scan_cpu.cpp): parallel over channels, sequential in time,
// state in registers; the backward recomputes the states rather than storing them. InputError on
// tensors of another device.
at::Tensor selective_scan_fused_cpu(const at::Tensor& u,
                                    const at::Tensor& delta,
                                    const at::Tensor& A,
                                    const at::Tensor& Bs,
                                    const at::Tensor& Cs);

// Tokens per chunk of the chunked scan. A pass runs chunk + T / chunk dependent small steps (kernel
// launches on a GPU), fewest at sqrt(T): 64 is the minimum at T = 4096 and within 6% of it from 2k
// to 8k tokens (Mamba's 2048: 96 steps, 91 at best; 128 gives 144), 25% above it at 1k. The
// backward keeps one state per chunk: 1/64 of a [B, T, D, N] tensor.
constexpr int64_t kDefaultScanChunk = 64;

// The chunked scan alone (selective_scan_chunked.cpp): ATen operations only, so it runs on any
// device with no host synchronisation; its backward recomputes the states from those entering
// each chunk. chunk_size >= 1; the result does not depend on it beyond rounding.
at::Tensor selective_scan_chunked(const at::Tensor& u,
                                  const at::Tensor& delta,
                                  const at::Tensor& A,
                                  const at::Tensor& Bs,
                                  const at::Tensor& Cs,
                                  int64_t chunk_size = kDefaultScanChunk);

}  // namespace gpudays::models
