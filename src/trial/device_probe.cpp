// The device probe: the fastest of timed square matmuls (2 n^3 floating-point operations each) and
// of tensor copies (2 x bytes moved each), after warm-up runs. A peak is the best the device did:
// on a shared machine other work only ever slows a run down, so the fastest run is the one least
// disturbed (a median under load put the CPU's peak below what trials then reached). On the CPU a
// run's time is the process's CPU time per intra-op thread when that is below its wall time (the
// threads were descheduled, not slow).
#include "trial/device_probe.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/device.h"
#include "sweep/step_timing.h"

namespace gpudays {
namespace {

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The seconds of one run of `op`, the device synchronised around it (see the file comment).
double run_seconds(c10::Device device, const std::function<void()>& op) {
  using Clock = std::chrono::steady_clock;
  synchronize(device);
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  op();
  synchronize(device);
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (!device.is_cpu()) return wall;
  const double cpu_per_thread = (process_cpu_seconds() - cpu_start) / at::get_num_threads();
  return cpu_per_thread > 0.0 ? std::min(wall, cpu_per_thread) : wall;
}

// The fastest run of `op` over the timed runs, after the warm-up runs.
double fastest_seconds(c10::Device device,
                       const DeviceProbeOptions& options,
                       const std::function<void()>& op) {
  for (int64_t i = 0; i < options.warmup_runs; ++i) op();
  double fastest = run_seconds(device, op);
  for (int64_t i = 1; i < options.timed_runs; ++i)
    fastest = std::min(fastest, run_seconds(device, op));
  return fastest;
}

double matmul_tflops(c10::Device device, at::ScalarType dtype, const DeviceProbeOptions& options) {
  const int64_t n = options.matmul_n > 0 ? options.matmul_n : device.is_cuda() ? 8192 : 1024;
  const auto tensor = at::TensorOptions().device(device).dtype(dtype);
  const at::Tensor a = at::randn({n, n}, tensor);
  const at::Tensor b = at::randn({n, n}, tensor);
  at::Tensor c = at::empty({n, n}, tensor);
  const double seconds = fastest_seconds(device, options, [&] { at::mm_out(c, a, b); });
  return 2.0 * static_cast<double>(n) * n * n / seconds / 1e12;
}

double bf16_matmul_tflops(c10::Device device, const DeviceProbeOptions& options) {
  try {
    return matmul_tflops(device, at::kBFloat16, options);
  } catch (const std::exception&) {
    return 0.0;  // no bf16 matmul on this device
  }
}

double copy_gb_per_s(c10::Device device, const DeviceProbeOptions& options) {
  const auto tensor = at::TensorOptions().device(device).dtype(at::kFloat);
  const at::Tensor source = at::full({options.copy_bytes / 4}, 1.0f, tensor);
  at::Tensor target = at::empty_like(source);
  const double seconds = fastest_seconds(device, options, [&] { target.copy_(source); });
  return 2.0 * static_cast<double>(source.nbytes()) / seconds / 1e9;
}

// TF32 off while it lives, then as it was: the fp32 figure is fp32's.
class Tf32Off {
 public:
  Tf32Off() : was_enabled_(tf32_enabled()) { set_tf32(false); }
  Tf32Off(const Tf32Off&) = delete;
  Tf32Off& operator=(const Tf32Off&) = delete;
  ~Tf32Off() { set_tf32(was_enabled_); }

 private:
  bool was_enabled_;
};

void check(const DeviceProbeOptions& options) {
  if (options.matmul_n < 0 || options.warmup_runs < 0 || options.timed_runs < 1 ||
      options.copy_bytes < 4) {
    throw InputError(
        fmt::format("device probe: matmul n {}, {} warm-up and {} timed runs, {} "
                    "bytes copied (n >= 0, runs >= 0 and >= 1, bytes >= 4)",
                    options.matmul_n,
                    options.warmup_runs,
                    options.timed_runs,
                    options.copy_bytes));
  }
}

}  // namespace

DeviceProbe probe_device(c10::Device device, const DeviceProbeOptions& options) {
  check(options);
  if (device.is_cuda() && !device.has_index()) device = c10::Device(c10::kCUDA, 0);
  DeviceProbe p;
  p.device = device.str();
  p.device_name = device_name(device);
  const std::string cpu_prefix = "cpu: ";  // device_name's for the CPU, before its model name
  if (device.is_cpu() && p.device_name.rfind(cpu_prefix, 0) == 0) {
    p.device_name = p.device_name.substr(cpu_prefix.size());
  }
  p.threads = at::get_num_threads();
  {
    const Tf32Off fp32;
    p.matmul_fp32_tflops = matmul_tflops(device, at::kFloat, options);
  }
  p.matmul_bf16_tflops = bf16_matmul_tflops(device, options);
  p.memory_bandwidth_gb_per_s = copy_gb_per_s(device, options);
  p.memory_bytes = device.is_cuda()
                       ? device_memory(device).total_bytes
                       : static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return p;
}

nlohmann::ordered_json to_json(const DeviceProbe& probe) {
  return {{"device", probe.device},
          {"device_name", probe.device_name},
          {"threads", probe.threads},
          {"matmul_fp32_tflops", probe.matmul_fp32_tflops},
          {"matmul_bf16_tflops", probe.matmul_bf16_tflops},
          {"memory_bandwidth_gb_per_s", probe.memory_bandwidth_gb_per_s},
          {"memory_bytes", probe.memory_bytes}};
}

}  // namespace gpudays
