// What single operations cost on this machine's CPU, for the planner's host-CPU constants
// (src/plan/device_model.h, docs/planner.md "The host CPU"): the first touch of a fresh large
// tensor, a depthwise convolution's forward and its two gradients against a square matmul, and
// the plain selective scan per (token, channel, state). Times are the calling thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), the minimum of timed runs, so that other work on a shared machine
// disturbs them less; run it with one thread (it sets one). Prints one line per measurement.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "models/selective_scan.h"

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double min_cpu_s(const std::function<void()>& op, int runs = 7) {
  op();  // warm-up
  double best_s = 1e30;
  for (int i = 0; i < runs; ++i) {
    const double start_s = thread_cpu_s();
    op();
    best_s = std::min(best_s, thread_cpu_s() - start_s);
  }
  return best_s;
}

double matmul_flops_per_s() {
  const at::Tensor a = at::randn({1024, 1024});
  const at::Tensor b = at::randn({1024, 1024});
  at::Tensor c = at::empty({1024, 1024});
  return 2.0 * 1024 * 1024 * 1024 / min_cpu_s([&] { at::mm_out(c, a, b); });
}

// Copying into a fresh tensor against copying into a reused one, per byte copied.
void first_touch() {
  for (int64_t elements : {int64_t{1} << 21, int64_t{1} << 23, int64_t{1} << 24}) {
    const at::Tensor a = at::randn({elements});
    at::Tensor out = at::empty({elements});
    const double fresh_s = min_cpu_s([&] { (void)a.clone(); });
    const double reused_s = min_cpu_s([&] { out.copy_(a); });
    const double bytes = 4.0 * static_cast<double>(elements);
    std::printf("first_touch tensor_mib=%.0f fresh_ns_per_byte=%.3f reused_ns_per_byte=%.3f\n",
                bytes / (1 << 20),
                1e9 * fresh_s / bytes,
                1e9 * reused_s / bytes);
  }
}

// Depthwise 7x7 convolution, channels-first as ConvNeXt runs it: [B, C, S, S].
void depthwise_conv(double matmul_rate) {
  const int64_t shapes[][3] = {{128, 16, 8}, {64, 32, 16}, {256, 64, 4}, {128, 128, 4}};
  for (const auto& shape : shapes) {
    const int64_t b = shape[0], c = shape[1], s = shape[2];
    const at::Tensor x = at::randn({b, c, s, s});
    const at::Tensor w = at::randn({c, 1, 7, 7});
    const at::Tensor y = at::conv2d(x, w, {}, /*stride=*/1, /*padding=*/3, /*dilation=*/1, c);
    const at::Tensor grad = at::randn_like(y);
    auto backward = [&](bool input, bool weight) {
      (void)at::convolution_backward(grad,
                                     x,
                                     w,
                                     std::nullopt,
                                     {1, 1},
                                     {3, 3},
                                     {1, 1},
                                     /*transposed=*/false,
                                     {0, 0},
                                     c,
                                     {input, weight, false});
    };
    const double flops = 2.0 * 49.0 * static_cast<double>(b * c * s * s);
    const double fwd_s =
        min_cpu_s([&] { (void)at::conv2d(x, w, {}, 1, /*padding=*/3, 1, /*groups=*/c); });
    const double input_s = min_cpu_s([&] { backward(true, false); });
    const double weight_s = min_cpu_s([&] { backward(false, true); });
    std::printf(
        "depthwise_conv7x7 b=%ld c=%ld side=%ld forward=%.3f input_grad=%.3f weight_grad=%.4f "
        "(fractions of the matmul rate)\n",
        static_cast<long>(b),
        static_cast<long>(c),
        static_cast<long>(s),
        flops / fwd_s / matmul_rate,
        flops / input_s / matmul_rate,
        flops / weight_s / matmul_rate);
  }
}

// The plain selective scan (models/selective_scan.cpp), forward and forward + backward.
void plain_scan() {
  const int64_t shapes[][4] = {{16, 256, 128, 16}, {2, 512, 256, 16}, {8, 512, 256, 16}};
  for (const auto& shape : shapes) {
    const int64_t b = shape[0], d = shape[1], t = shape[2], n = shape[3];
    const at::Tensor u = torch::randn({b, d, t}).requires_grad_();
    const at::Tensor delta = torch::rand({b, d, t}).requires_grad_();
    const at::Tensor a = (-torch::rand({d, n})).requires_grad_();
    const at::Tensor bs = torch::randn({b, t, n}).requires_grad_();
    const at::Tensor cs = torch::randn({b, t, n}).requires_grad_();
    auto scan = [&] {
      return gpudays::models::selective_scan(
          u, delta, a, bs, cs, gpudays::models::ScanKind::kPlain);
    };
    const double fwd_s = min_cpu_s([&] { (void)scan(); }, 3);
    const double both_s = min_cpu_s([&] { scan().sum().backward(); }, 3);
    const double elements = static_cast<double>(b * d * t * n);
    std::printf(
        "plain_scan b=%ld d=%ld t=%ld n=%ld tensor_mib=%.0f forward_ms=%.1f "
        "backward_ms=%.1f forward_ns_per_element=%.2f backward_ns_per_element=%.2f\n",
        static_cast<long>(b),
        static_cast<long>(d),
        static_cast<long>(t),
        static_cast<long>(n),
        4.0 * elements / (1 << 20),
        1e3 * fwd_s,
        1e3 * (both_s - fwd_s),
        1e9 * fwd_s / elements,
        1e9 * (both_s - fwd_s) / elements);
  }
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  at::set_num_threads(1);
  const double matmul_rate = matmul_flops_per_s();
  std::printf("matmul 1024^3 fp32 gflop_per_s=%.1f\n", matmul_rate / 1e9);
  first_touch();
  depthwise_conv(matmul_rate);
  plain_scan();
  return 0;
}
