// The chunked selective scan in ATen operations only (any device, no host synchronisation), as an
// autograd Function. The sequence splits into C chunks of L tokens that advance together:
// (1) L - 1 steps scan every chunk from a zero state; (2) C - 1 steps over [B, D, N] carry the
// state from chunk to chunk; (3) one pass adds each chunk's entering state, decayed by
// exp(A * cumsum(delta)) (delta A <= 0: never above 1). Tensors are token-major, [B, C, L, D, N],
// so the sums over N or D (y = C . h and the gradients) are batched matrix products that read
// their operand once. The backward recomputes the states in one scan from the saved entering
// states, then runs the three parts backwards in time for the adjoint. Peak extra memory, with
// E = B C L D N elements in the compute dtype (fp32; fp64 for fp64 inputs; C L = T rounded up to
// whole chunks): 2 E in forward, 3 E in backward, plus a few [B, T, D] tensors (inputs, their
// cumulative sums, gradients; measured on the CPU at N = 16: 2.3 E and 3.4 E); kept between them:
// E / L (one state per chunk). Sums over N and D run through matmul, so in TF32 where the caller
// allows TF32 matmuls (free-lunch on a GPU).
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/ScalarType.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <vector>

#include "models/selective_scan.h"

namespace gpudays::models {
namespace {

// The inputs in the compute dtype, token-major, padded at the end to C * L tokens (u = delta = 0
// there: decay 1, no input, so the padding changes no real token) and viewed by chunk.
struct Chunked {
  at::Tensor u, delta;  // [B, C, L, D]
  at::Tensor A;         // [D, N]
  at::Tensor Bs, Cs;    // [B, C, L, 1, N]: broadcast over D

  int64_t chunks() const { return u.size(1); }
  int64_t length() const { return u.size(2); }
  int64_t tokens() const { return u.size(0) * chunks() * length(); }  // B C L
};

at::ScalarType compute_dtype(at::ScalarType type) {
  return c10::isReducedFloatingType(type) ? at::kFloat : type;
}

// [B, T, X] -> [B, C, L, X] in the compute dtype, zero-padded to C * L tokens.
at::Tensor by_chunk(const at::Tensor& t, int64_t chunks, int64_t length) {
  const at::Tensor wide = t.to(compute_dtype(t.scalar_type()));
  const int64_t pad = chunks * length - t.size(1);
  const at::Tensor padded =
      pad == 0 ? wide.contiguous() : at::constant_pad_nd(wide, {0, 0, 0, pad});
  return padded.view({t.size(0), chunks, length, t.size(2)});
}

// u, delta: [B, D, T]; A: [D, N]; Bs, Cs: [B, T, N].
Chunked chunk_inputs(const at::Tensor& u,
                     const at::Tensor& delta,
                     const at::Tensor& A,
                     const at::Tensor& Bs,
                     const at::Tensor& Cs,
                     int64_t chunk_size) {
  const int64_t steps = u.size(2);
  const int64_t length = std::min(chunk_size, steps);
  const int64_t chunks = (steps + length - 1) / length;
  return {by_chunk(u.transpose(1, 2), chunks, length),
          by_chunk(delta.transpose(1, 2), chunks, length),
          A.to(compute_dtype(A.scalar_type())),
          by_chunk(Bs, chunks, length).unsqueeze(3),
          by_chunk(Cs, chunks, length).unsqueeze(3)};
}

// exp(delta_t A): the decay of each token. -> [B, C, L, D, N]
at::Tensor token_decays(const Chunked& in) {
  return (in.delta.unsqueeze(-1) * in.A).exp_();
}

// exp(A * sum_{j in the chunk, j <= t} delta_j) into out: the decay from the chunk's start
// through token t. [B, C, L, D, N]
void decays_from_chunk_start(const Chunked& in, at::Tensor& out) {
  at::mul_out(out, in.delta.cumsum(/*dim=*/2).unsqueeze(-1), in.A).exp_();
}

// exp(A * sum_{j in the chunk, j > t} delta_j) into out: the decay from token t through the
// chunk's end, from a reversed cumsum (total - cumsum would lose the small sums). [B, C, L, D, N]
void decays_to_chunk_end(const Chunked& in, at::Tensor& out) {
  const int64_t L = in.length();
  const at::Tensor from_t = in.delta.flip(2).cumsum(2).flip(2);  // sum_{j >= t}
  const at::Tensor after_t = at::constant_pad_nd(from_t.narrow(2, 1, L - 1), {0, 0, 0, 1});
  at::mul_out(out, after_t.unsqueeze(-1), in.A).exp_();
}

// The token inputs x_t = delta_t u_t B_t. -> [B, C, L, D, N]
at::Tensor token_inputs(const Chunked& in) {
  return (in.delta * in.u).unsqueeze(-1) * in.Bs;
}

// Scans every chunk at once, one token of each per step: h_t += a_t h_{t-1}, from `entering`
// ([B, C, D, N]) before each chunk's first token when given, from zero otherwise.
void scan_chunks(const at::Tensor& a, at::Tensor& h, const at::Tensor& entering = {}) {
  if (entering.defined()) h.select(2, 0).addcmul_(a.select(2, 0), entering);
  for (int64_t i = 1; i < h.size(2); ++i) {
    h.select(2, i).addcmul_(a.select(2, i), h.select(2, i - 1));
  }
}

// Carries a value across chunks, from the last chunk backwards when `reverse`: entering[c] =
// out_of[c'] + decay[c'] * entering[c'] for the neighbour c' (c - 1, or c + 1), zero for the
// first chunk in that order. All [B, C, D, N].
at::Tensor carry(const at::Tensor& out_of, const at::Tensor& decay, bool reverse) {
  at::Tensor entering = at::zeros_like(out_of);
  const int64_t C = out_of.size(1);
  for (int64_t k = 1; k < C; ++k) {
    const int64_t c = reverse ? C - 1 - k : k;
    const int64_t from = reverse ? c + 1 : c - 1;
    at::Tensor out = entering.select(1, c);
    at::addcmul_out(out, out_of.select(1, from), decay.select(1, from), entering.select(1, from));
  }
  return entering;
}

// exp(A * sum of delta over the chunk): a whole chunk's decay. -> [B, C, D, N]
at::Tensor chunk_decays(const Chunked& in) {
  return (in.delta.sum(/*dim=*/2).unsqueeze(-1) * in.A).exp_();
}

// Every state h_t, in place of the token inputs in h; `a`, the token decays, is overwritten.
// -> the state entering each chunk, before its first token: [B, C, D, N]
at::Tensor scan_states(const Chunked& in, at::Tensor& a, at::Tensor& h) {
  scan_chunks(a, h);  // (1) local states
  const at::Tensor entering = carry(h.select(2, in.length() - 1), chunk_decays(in), false);  // (2)
  decays_from_chunk_start(in, a);
  h.addcmul_(a, entering.unsqueeze(2));  // (3)
  return entering;
}

// The adjoint g_t = dL/dh_t = C_t gy_t + a_{t+1} g_{t+1}, in place of C_t gy_t in g: the same
// three parts backwards in time. `a`, the token decays, is overwritten.
void scan_adjoints(const Chunked& in, at::Tensor& a, at::Tensor& g) {
  const int64_t L = in.length();
  // (1) Each chunk from a zero adjoint after its last token.
  for (int64_t i = L - 2; i >= 0; --i) {
    g.select(2, i).addcmul_(a.select(2, i + 1), g.select(2, i + 1));
  }
  // (2) The adjoint entering chunk c after its last token, from chunk c + 1: that chunk's first
  // local adjoint times its first decay, plus what enters it decayed through the whole chunk.
  const at::Tensor first = a.select(2, 0) * g.select(2, 0);  // [B, C, D, N]
  const at::Tensor entering = carry(first, chunk_decays(in), true);
  // (3) g_t += (decay from t through the chunk's end) * entering adjoint.
  decays_to_chunk_end(in, a);
  g.addcmul_(a, entering.unsqueeze(2));
}

struct Grads {
  at::Tensor u, delta;  // [B, C, L, D]
  at::Tensor A;         // [D, N]
  at::Tensor Bs, Cs;    // [B, C, L, N]
};

// [B, C, L, D, N] -> [B C L, D, N]: one matrix per token.
at::Tensor per_token(const at::Tensor& t, const Chunked& in) {
  return t.view({in.tokens(), t.size(3), t.size(4)});
}

// Gradients of every input, given dL/dy ([B, C, L, D]) and the states entering the chunks
// ([B, C, D, N]). Three [B, C, L, D, N] buffers: a, h (then g) and decayed_prev.
Grads scan_backward(const Chunked& in, const at::Tensor& gy, const at::Tensor& entering) {
  const int64_t L = in.length();
  const int64_t D = in.A.size(0);
  const std::vector<int64_t> per_state = {gy.size(0), in.chunks(), L, in.A.size(1)};
  at::Tensor a = token_decays(in);
  at::Tensor h = token_inputs(in);
  scan_chunks(a, h, entering);  // every state, in one scan
  Grads grads;
  // y_t = C_t . h_t: dL/dC_t = sum_d gy_t h_t.
  grads.Cs = at::matmul(gy.reshape({in.tokens(), 1, D}), per_token(h, in)).view(per_state);
  // The decayed previous states a_t h_{t-1} (the entering state before a chunk's first token).
  at::Tensor decayed_prev = at::empty_like(h);
  at::Tensor later = decayed_prev.narrow(2, 1, L - 1);
  at::mul_out(later, a.narrow(2, 1, L - 1), h.narrow(2, 0, L - 1));
  at::Tensor first = decayed_prev.select(2, 0);
  at::mul_out(first, a.select(2, 0), entering);
  at::Tensor g = at::mul_out(h, gy.unsqueeze(-1), in.Cs);  // h is free: the adjoints' source
  scan_adjoints(in, a, g);
  a.reset();
  // x_t = (delta_t u_t) B_t: dL/dB_t = sum_d g_t delta_t u_t; dL/d(delta_t u_t) = g_t . B_t.
  const at::Tensor du_row = (in.delta * in.u).reshape({in.tokens(), 1, D});
  grads.Bs = at::matmul(du_row, per_token(g, in)).view(per_state);
  const at::Tensor g_du =
      at::matmul(per_token(g, in), in.Bs.reshape({in.tokens(), -1, 1})).view(in.u.sizes());
  // h_t = exp(delta_t A) h_{t-1} + x_t: dL/d(delta_t A) = g_t a_t h_{t-1}; per channel d, a
  // matrix [tokens, N] against A_d (for delta) and against delta_d (for A).
  const at::Tensor g_log = per_token(decayed_prev.mul_(g), in).transpose(0, 1);  // [D, BCL, N]
  g.reset();
  h.reset();  // the same buffer
  const at::Tensor g_delta_log = at::matmul(g_log, in.A.unsqueeze(-1)).squeeze(-1);  // [D, BCL]
  grads.delta = g_du * in.u + g_delta_log.t().view(in.u.sizes());
  grads.u = g_du * in.delta;
  const at::Tensor delta_col = in.delta.reshape({in.tokens(), D}).t().unsqueeze(-1);
  grads.A = at::matmul(g_log.transpose(1, 2), delta_col).squeeze(-1);  // [D, N]
  return grads;
}

// [B, C, L, X] -> [B, T, X] (the first T tokens) in `like`'s dtype, transposed to [B, X, T] when
// `like` is per channel ([B, D, T]).
at::Tensor unchunk(const at::Tensor& t, const at::Tensor& like, bool per_channel) {
  const at::Tensor flat = t.reshape({t.size(0), -1, t.size(3)});
  const int64_t steps = per_channel ? like.size(2) : like.size(1);
  const at::Tensor cut = flat.narrow(1, 0, steps);
  return (per_channel ? cut.transpose(1, 2) : cut).to(like.scalar_type()).contiguous();
}

class ChunkedScan : public torch::autograd::Function<ChunkedScan> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx,
                            const at::Tensor& u,
                            const at::Tensor& delta,
                            const at::Tensor& A,
                            const at::Tensor& Bs,
                            const at::Tensor& Cs,
                            int64_t chunk_size) {
    ctx->saved_data["chunk_size"] = chunk_size;
    const Chunked in = chunk_inputs(u, delta, A, Bs, Cs, chunk_size);
    at::Tensor a = token_decays(in);
    at::Tensor h = token_inputs(in);
    const at::Tensor entering = scan_states(in, a, h);
    ctx->save_for_backward({u, delta, A, Bs, Cs, entering});
    // y_t = C_t . h_t, one [D, N] x [N, 1] product per token.
    const at::Tensor y = at::matmul(per_token(h, in), in.Cs.reshape({in.tokens(), -1, 1}));
    return unchunk(y.view(in.u.sizes()), u, /*per_channel=*/true);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const torch::autograd::variable_list s = ctx->get_saved_variables();
    at::NoGradGuard no_grad;  // once differentiable, as the fused kernel
    const Chunked in =
        chunk_inputs(s[0], s[1], s[2], s[3], s[4], ctx->saved_data["chunk_size"].toInt());
    const at::Tensor gy = by_chunk(grad_outputs[0].transpose(1, 2), in.chunks(), in.length());
    const Grads g = scan_backward(in, gy, s[5]);
    return {unchunk(g.u, s[0], /*per_channel=*/true),
            unchunk(g.delta, s[1], /*per_channel=*/true),
            g.A.to(s[2].scalar_type()),
            unchunk(g.Bs, s[3], /*per_channel=*/false),
            unchunk(g.Cs, s[4], /*per_channel=*/false),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor selective_scan_chunked(const at::Tensor& u,
                                  const at::Tensor& delta,
                                  const at::Tensor& A,
                                  const at::Tensor& Bs,
                                  const at::Tensor& Cs,
                                  int64_t chunk_size) {
  TORCH_CHECK(chunk_size >= 1, "selective_scan_chunked: chunk_size must be >= 1, got ", chunk_size);
  TORCH_CHECK(u.size(2) >= 1, "selective_scan_chunked: the sequence is empty");
  return ChunkedScan::apply(u, delta, A, Bs, Cs, chunk_size);
}

}  // namespace gpudays::models
