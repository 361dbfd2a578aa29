// The fused selective scan on CPU, forward and backward, as an autograd Function. Channels run in
// parallel (at::parallel_for), time runs sequentially with the N-vector state in a small buffer;
// exp(delta A) comes from ATen's vectorised exp, 16 channels at a time. Nothing [B, D, T, N] is
// kept: the backward recomputes the states of one channel at a time. Same maths as the plain scan.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "models/selective_scan.h"

namespace gpudays::models {
namespace {

constexpr int64_t kRowsPerBlock = 16;  // channels per exp(delta A) block: [16, T, N]

// Contiguous inputs; u, delta: [B, D, T], A: [D, N], Bs, Cs: [B, T, N].
struct ScanInputs {
  at::Tensor u, delta, A, Bs, Cs;
  int64_t batch() const { return u.size(0); }
  int64_t channels() const { return u.size(1); }
  int64_t steps() const { return u.size(2); }
  int64_t states() const { return A.size(1); }
};

// exp(delta[b, d0 : d0 + rows, :, None] * A[d0 : d0 + rows, None, :]) -> [rows, T, N] contiguous.
at::Tensor decay_block(const ScanInputs& in, int64_t b, int64_t d0, int64_t rows) {
  return at::exp(in.A.narrow(0, d0, rows).unsqueeze(1) *
                 in.delta[b].narrow(0, d0, rows).unsqueeze(-1))
      .contiguous();
}

// Pointers into one (batch, channel) row.
template <typename scalar_t>
struct Row {
  const scalar_t* u;      // [T]
  const scalar_t* delta;  // [T]
  const scalar_t* A;      // [N]
  const scalar_t* Bs;     // [T, N]
  const scalar_t* Cs;     // [T, N]
  const scalar_t* decay;  // [T, N]
};

template <typename scalar_t>
Row<scalar_t> row(const ScanInputs& in, const at::Tensor& decay, int64_t b, int64_t d, int64_t r) {
  const int64_t T = in.steps();
  const int64_t N = in.states();
  const int64_t ud = (b * in.channels() + d) * T;
  return {in.u.data_ptr<scalar_t>() + ud,
          in.delta.data_ptr<scalar_t>() + ud,
          in.A.data_ptr<scalar_t>() + d * N,
          in.Bs.data_ptr<scalar_t>() + b * T * N,
          in.Cs.data_ptr<scalar_t>() + b * T * N,
          decay.data_ptr<scalar_t>() + r * T * N};
}

// h_t = decay_t h_{t-1} + (delta_t B_t) u_t into states [T + 1, N] (row 0: h_{-1} = 0, row t + 1:
// h_t), and y_t = C_t . h_t when y is not null. The update is elementwise over n (vectorised); the
// dot product sums in order n = 0..N-1.
template <typename scalar_t>
void scan_row(const Row<scalar_t>& x, int64_t T, int64_t N, scalar_t* y, scalar_t* states) {
  std::fill(states, states + N, scalar_t(0));
  for (int64_t t = 0; t < T; ++t) {
    const scalar_t dt = x.delta[t];
    const scalar_t ut = x.u[t];
    const scalar_t* __restrict a = x.decay + t * N;
    const scalar_t* __restrict bt = x.Bs + t * N;
    const scalar_t* __restrict h_prev = states + t * N;
    scalar_t* __restrict h = states + (t + 1) * N;
    for (int64_t n = 0; n < N; ++n) h[n] = a[n] * h_prev[n] + dt * bt[n] * ut;
    if (y == nullptr) continue;
    const scalar_t* ct = x.Cs + t * N;
    scalar_t acc = 0;
    for (int64_t n = 0; n < N; ++n) acc += h[n] * ct[n];
    y[t] = acc;
  }
}

template <typename scalar_t>
at::Tensor forward_kernel(const ScanInputs& in) {
  at::Tensor y = at::empty(in.u.sizes(), in.u.options());
  const int64_t T = in.steps();
  const int64_t N = in.states();
  at::parallel_for(0, in.channels(), kRowsPerBlock, [&](int64_t begin, int64_t end) {
    std::vector<scalar_t> states((T + 1) * N);
    for (int64_t b = 0; b < in.batch(); ++b) {
      for (int64_t d0 = begin; d0 < end; d0 += kRowsPerBlock) {
        const int64_t rows = std::min(kRowsPerBlock, end - d0);
        const at::Tensor decay = decay_block(in, b, d0, rows);
        for (int64_t r = 0; r < rows; ++r) {
          scalar_t* y_row = y.data_ptr<scalar_t>() + (b * in.channels() + d0 + r) * T;
          scan_row<scalar_t>(row<scalar_t>(in, decay, b, d0 + r, r), T, N, y_row, states.data());
        }
      }
    }
  });
  return y;
}

// Gradients of the inputs; gB and gC hold one partial sum over channels per thread.
struct ScanGrads {
  at::Tensor u, delta, A, Bs, Cs;
};

// Reverse pass through one row, given its states (as scan_row writes them) and dL/dy_t. g is the
// total dL/dh_t: from y_t (gy_t C_t) and from h_{t+1} (decay_{t+1} g_{t+1}). The gradients of A,
// B and C add to what the buffers hold (sums over batch, steps and channels).
template <typename scalar_t>
void backward_row(const Row<scalar_t>& x,
                  const scalar_t* states,
                  const scalar_t* gy,
                  int64_t T,
                  int64_t N,
                  scalar_t* gu,
                  scalar_t* gdelta,
                  scalar_t* gA,
                  scalar_t* gB,
                  scalar_t* gC) {
  std::vector<scalar_t> buffers(3 * N, scalar_t(0));
  scalar_t* __restrict g_next = buffers.data();  // decay_{t+1} dL/dh_{t+1}
  scalar_t* __restrict g = g_next + N;           // dL/dh_t
  scalar_t* __restrict g_exp = g + N;            // dL/d(delta_t A_n)
  scalar_t* __restrict gA_row = gA;
  for (int64_t t = T - 1; t >= 0; --t) {
    const scalar_t dt = x.delta[t];
    const scalar_t ut = x.u[t];
    const scalar_t gyt = gy[t];
    const scalar_t* __restrict a = x.decay + t * N;
    const scalar_t* __restrict bt = x.Bs + t * N;
    const scalar_t* __restrict ct = x.Cs + t * N;
    const scalar_t* __restrict h_prev = states + t * N;
    const scalar_t* __restrict h = states + (t + 1) * N;
    scalar_t* __restrict gBt = gB + t * N;
    scalar_t* __restrict gCt = gC + t * N;
    for (int64_t n = 0; n < N; ++n) {
      g[n] = g_next[n] + gyt * ct[n];
      g_exp[n] = g[n] * h_prev[n] * a[n];
      gCt[n] += gyt * h[n];
      gBt[n] += g[n] * dt * ut;
      gA_row[n] += g_exp[n] * dt;
      g_next[n] = g[n] * a[n];
    }
    scalar_t g_dt = 0;
    scalar_t g_u = 0;
    for (int64_t n = 0; n < N; ++n) {
      g_dt += g_exp[n] * x.A[n] + g[n] * bt[n] * ut;
      g_u += g[n] * dt * bt[n];
    }
    gu[t] = g_u;
    gdelta[t] = g_dt;
  }
}

template <typename scalar_t>
ScanGrads backward_kernel(const ScanInputs& in, const at::Tensor& gy) {
  const int64_t B = in.batch();
  const int64_t D = in.channels();
  const int64_t T = in.steps();
  const int64_t N = in.states();
  ScanGrads g{at::empty(in.u.sizes(), in.u.options()),
              at::empty(in.u.sizes(), in.u.options()),
              at::zeros(in.A.sizes(), in.A.options()),
              {},
              {}};
  // B and C are shared by all channels: each thread sums its channels into its own slice.
  const at::Tensor gB_parts = at::zeros({at::get_num_threads(), B, T, N}, in.u.options());
  const at::Tensor gC_parts = at::zeros({at::get_num_threads(), B, T, N}, in.u.options());
  at::parallel_for(0, D, kRowsPerBlock, [&](int64_t begin, int64_t end) {
    const int64_t part = at::get_thread_num();
    std::vector<scalar_t> states((T + 1) * N);
    for (int64_t b = 0; b < B; ++b) {
      scalar_t* gB = gB_parts.data_ptr<scalar_t>() + (part * B + b) * T * N;
      scalar_t* gC = gC_parts.data_ptr<scalar_t>() + (part * B + b) * T * N;
      for (int64_t d0 = begin; d0 < end; d0 += kRowsPerBlock) {
        const int64_t rows = std::min(kRowsPerBlock, end - d0);
        const at::Tensor decay = decay_block(in, b, d0, rows);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t d = d0 + r;
          const int64_t ud = (b * D + d) * T;
          const Row<scalar_t> x = row<scalar_t>(in, decay, b, d, r);
          scan_row<scalar_t>(x, T, N, /*y=*/nullptr, states.data());
          backward_row(x,
                       states.data(),
                       gy.data_ptr<scalar_t>() + ud,
                       T,
                       N,
                       g.u.data_ptr<scalar_t>() + ud,
                       g.delta.data_ptr<scalar_t>() + ud,
                       g.A.data_ptr<scalar_t>() + d * N,
                       gB,
                       gC);
        }
      }
    }
  });
  g.Bs = gB_parts.sum(/*dim=*/0);
  g.Cs = gC_parts.sum(/*dim=*/0);
  return g;
}

class FusedScan : public torch::autograd::Function<FusedScan> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx,
                            const at::Tensor& u,
                            const at::Tensor& delta,
                            const at::Tensor& A,
                            const at::Tensor& Bs,
                            const at::Tensor& Cs) {
    ctx->save_for_backward({u, delta, A, Bs, Cs});
    const ScanInputs in{u, delta, A, Bs, Cs};
    at::Tensor y;
    AT_DISPATCH_FLOATING_TYPES(
        u.scalar_type(), "selective_scan_fused_cpu", [&] { y = forward_kernel<scalar_t>(in); });
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    const ScanInputs in{saved[0], saved[1], saved[2], saved[3], saved[4]};
    const at::Tensor gy = grad_outputs[0].contiguous();
    at::NoGradGuard no_grad;
    ScanGrads g;
    AT_DISPATCH_FLOATING_TYPES(gy.scalar_type(), "selective_scan_fused_cpu_backward", [&] {
      g = backward_kernel<scalar_t>(in, gy);
    });
    return {g.u, g.delta, g.A, g.Bs, g.Cs};
  }
};

}  // namespace

at::Tensor selective_scan_fused_cpu(const at::Tensor& u,
                                    const at::Tensor& delta,
                                    const at::Tensor& A,
                                    const at::Tensor& Bs,
                                    const at::Tensor& Cs) {
  for (const at::Tensor* t : {&u, &delta, &A, &Bs, &Cs}) {
    if (!t->device().is_cpu()) {
      throw InputError("the fused selective scan runs on CPU tensors only, got " +
                       t->device().str() + " (use the plain scan there)");
    }
    TORCH_CHECK(t->scalar_type() == u.scalar_type(),
                "selective_scan: mixed dtypes ",
                t->scalar_type(),
                " and ",
                u.scalar_type());
  }
  return FusedScan::apply(
      u.contiguous(), delta.contiguous(), A.contiguous(), Bs.contiguous(), Cs.contiguous());
}

}  // namespace gpudays::models
