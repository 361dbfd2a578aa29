// The plain selective scan, step by step as HuggingFace's mamba_selective_scan slow path
// (discretise the whole sequence, then one ATen update per token), and the dispatch among the three
// implementations by device. The fused CPU kernel is in selective_scan_cpu.cpp, the chunked ATen
// scan in selective_scan_chunked.cpp.
#include "models/selective_scan.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>

#include <vector>

#include "common/error.h"

namespace gpudays::models {
namespace {

at::Tensor scan_plain(const at::Tensor& u,
                      const at::Tensor& delta,
                      const at::Tensor& A,
                      const at::Tensor& Bs,
                      const at::Tensor& Cs) {
  // Zero-order hold for A, Euler for B, over the whole sequence: [B, D, T, N].
  const at::Tensor decay = at::exp(A.unsqueeze(0).unsqueeze(2) * delta.unsqueeze(-1));
  const at::Tensor input = delta.unsqueeze(-1) * Bs.unsqueeze(1) * u.unsqueeze(-1);
  // unbind (not select) per step, so that the backward stacks the per-step gradients once
  // instead of scattering each into a zero tensor of the full size.
  const std::vector<at::Tensor> decay_t = decay.unbind(/*dim=*/2);  // T x [B, D, N]
  const std::vector<at::Tensor> input_t = input.unbind(/*dim=*/2);  // T x [B, D, N]
  const std::vector<at::Tensor> c_t = Cs.unbind(/*dim=*/1);         // T x [B, N]
  at::Tensor state = at::zeros({u.size(0), u.size(1), A.size(1)}, u.options());
  std::vector<at::Tensor> outputs;
  outputs.reserve(decay_t.size());
  for (size_t t = 0; t < decay_t.size(); ++t) {
    state = decay_t[t] * state + input_t[t];
    outputs.push_back(at::matmul(state, c_t[t].unsqueeze(-1)).squeeze(-1));  // [B, D]
  }
  return at::stack(outputs, /*dim=*/-1);  // [B, D, T]
}

}  // namespace

std::string to_string(ScanKind kind) {
  switch (kind) {
    case ScanKind::kPlain:
      return "plain";
    case ScanKind::kFused:
      return "fused";
    case ScanKind::kChunked:
      return "chunked";
  }
  return "plain";
}

ScanKind parse_scan_kind(const std::string& text) {
  for (const ScanKind kind : {ScanKind::kPlain, ScanKind::kFused, ScanKind::kChunked}) {
    if (text == to_string(kind)) return kind;
  }
  throw InputError("unknown selective scan implementation '" + text +
                   "' (valid: " + join_choices({"plain", "fused", "chunked"}) + ")");
}

ScanKind scan_for_device(ScanKind requested, const c10::Device& device) {
  if (requested == ScanKind::kFused && !device.is_cpu()) return ScanKind::kChunked;
  return requested;
}

std::string scan_implementation(ScanKind requested, const c10::Device& device) {
  switch (scan_for_device(requested, device)) {
    case ScanKind::kPlain:
      return "plain";
    case ScanKind::kFused:
      return "fused-cpu";
    case ScanKind::kChunked:
      return "chunked-aten";
  }
  return "plain";
}

at::Tensor selective_scan(const at::Tensor& u,
                          const at::Tensor& delta,
                          const at::Tensor& A,
                          const at::Tensor& Bs,
                          const at::Tensor& Cs,
                          ScanKind kind) {
  TORCH_CHECK(u.dim() == 3 && delta.sizes() == u.sizes(),
              "selective_scan: u and delta must be [B, D, T], got ",
              u.sizes(),
              " and ",
              delta.sizes());
  TORCH_CHECK(A.dim() == 2 && A.size(0) == u.size(1),
              "selective_scan: A must be [D, N], got ",
              A.sizes(),
              " for D = ",
              u.size(1));
  const std::vector<int64_t> bc = {u.size(0), u.size(2), A.size(1)};
  TORCH_CHECK(Bs.sizes() == bc && Cs.sizes() == bc,
              "selective_scan: B and C must be [B, T, N] = ",
              at::IntArrayRef(bc),
              ", got ",
              Bs.sizes(),
              " and ",
              Cs.sizes());
  switch (scan_for_device(kind, u.device())) {
    case ScanKind::kPlain:
      return scan_plain(u, delta, A, Bs, Cs);
    case ScanKind::kFused:
      return selective_scan_fused_cpu(u, delta, A, Bs, Cs);
    case ScanKind::kChunked:
      return selective_scan_chunked(u, delta, A, Bs, Cs);
  }
  return scan_plain(u, delta, A, Bs, Cs);
}

}  // namespace gpudays::models
