// Measures the plain and the fused selective scan on CPU: forward + backward of a small Mamba
// (loss and every gradient) and of one layer's scan alone. Prints medians over repetitions
// (a measurement, not a test): wall-clock and process CPU time. Usage: gpudays_scan_bench
// [repetitions] [seq_len] [threads]
#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softplus.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#include "models/losses.h"
#include "models/mamba.h"

namespace {

using namespace gpudays::models;

struct Timing {
  double wall_s = 0;  // median wall-clock time
  double cpu_s = 0;   // median CPU time of the process (all threads): robust on a shared machine
};

double cpu_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Timing median(int repetitions, const std::function<void()>& step) {
  step();  // warm-up: allocator, thread pool
  std::vector<double> wall, cpu;
  for (int rep = 0; rep < repetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_now_s();
    step();
    cpu.push_back(cpu_now_s() - cpu_start);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

// The small model: mamba-2.8b's layout at d_model 256 (d_inner 512), 4 layers.
MambaOptions small_model() {
  MambaOptions o;
  o.n_layers = 4;
  o.d_model = 256;
  o.vocab_size = 4096;
  o.d_state = 16;
  o.d_conv = 4;
  o.expand = 2;
  o.dt_rank = 16;  // ceil(d_model / 16)
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::atoi(argv[1]) : 5;
  const int64_t seq_len = argc > 2 ? std::atoll(argv[2]) : 512;
  if (argc > 3) at::set_num_threads(std::atoi(argv[3]));
  const int64_t batch = 2;
  torch::manual_seed(0);
  const MambaOptions options = small_model();
  std::printf("CPU, %d thread(s), fp32, batch %lld, seq_len %lld, median of %d\n",
              at::get_num_threads(),
              static_cast<long long>(batch),
              static_cast<long long>(seq_len),
              repetitions);

  MambaForCausalLM model(options);
  const at::Tensor tokens = at::randint(options.vocab_size, {batch, seq_len});
  const int64_t D = options.d_inner();
  const int64_t N = options.d_state;
  std::vector<at::Tensor> scan_args = {at::randn({batch, D, seq_len}),
                                       at::softplus(at::randn({batch, D, seq_len}) - 2),
                                       -at::exp(at::rand({D, N}) * std::log(16.0)),
                                       at::randn({batch, seq_len, N}),
                                       at::randn({batch, seq_len, N})};
  for (at::Tensor& t : scan_args) t.requires_grad_(true);

  std::printf("%-6s %16s %16s %16s %16s\n",
              "scan",
              "model f+b wall",
              "model f+b cpu",
              "scan f+b wall",
              "scan f+b cpu");
  for (const ScanKind kind : {ScanKind::kPlain, ScanKind::kFused}) {
    model->set_scan(kind);
    const Timing whole = median(repetitions, [&] {
      model->zero_grad();
      causal_lm_loss(model->forward(tokens), tokens).backward();
    });
    const Timing scan = median(repetitions, [&] {
      selective_scan(scan_args[0], scan_args[1], scan_args[2], scan_args[3], scan_args[4], kind)
          .sum()
          .backward();
    });
    std::printf("%-6s %14.4f s %14.4f s %14.4f s %14.4f s\n",
                to_string(kind).c_str(),
                whole.wall_s,
                whole.cpu_s,
                scan.wall_s,
                scan.cpu_s);
  }
  std::printf("model: %lld layers, d_model %lld, d_inner %lld, d_state %lld, vocab %lld\n",
              static_cast<long long>(options.n_layers),
              static_cast<long long>(options.d_model),
              static_cast<long long>(D),
              static_cast<long long>(N),
              static_cast<long long>(options.vocab_size));
  return 0;
}
