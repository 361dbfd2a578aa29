// Rotary tables and their application, as transformers' modeling_gpt_neox / modeling_llama.
#include "models/rotary.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>

namespace gpudays::models {
namespace {

// x: [..., n] -> [..., n]: (x1, x2) -> (-x2, x1) on the two halves of the last dimension.
at::Tensor rotate_half(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({x.narrow(-1, half, half).neg(), x.narrow(-1, 0, half)}, /*dim=*/-1);
}

}  // namespace

RotaryTables rotary_tables(int64_t dims, double base, int64_t seq_len, const at::Tensor& like) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(like.device());
  const at::Tensor exponents = at::arange(0, dims, 2, f32) / static_cast<double>(dims);
  const at::Tensor inv_freq = at::pow(base, exponents).reciprocal();
  const at::Tensor freqs = at::outer(at::arange(seq_len, f32), inv_freq);  // [T, dims / 2]
  const at::Tensor angles = at::cat({freqs, freqs}, /*dim=*/-1);           // [T, dims]
  return {angles.cos().to(like.scalar_type()), angles.sin().to(like.scalar_type())};
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& rotary) {
  const int64_t dims = rotary.cos.size(-1);
  const at::Tensor cos = rotary.cos.to(x.scalar_type());
  const at::Tensor sin = rotary.sin.to(x.scalar_type());
  if (dims == x.size(-1)) return x * cos + rotate_half(x) * sin;
  const at::Tensor x_rot = x.narrow(-1, 0, dims);
  const at::Tensor x_pass = x.narrow(-1, dims, x.size(-1) - dims);
  const at::Tensor rotated = x_rot * cos + rotate_half(x_rot) * sin;
  return at::cat({rotated, x_pass}, /*dim=*/-1);
}

}  // namespace gpudays::models
