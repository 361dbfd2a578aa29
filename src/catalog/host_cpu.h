// The host CPU as a device: its spec from a measurement of this machine (the probe's JSON line),
// and the one name it goes by in commands and results. Torch-free; running the probe and keeping
// its line is sweep/host_probe.h's, the probe itself the trial's.
#pragma once

#include <cstdint>
#include <string>

#include "catalog/gpu_spec.h"

namespace gpudays {

// The host CPU's name: its spec's, the key its trials are stored under (TrialRecord::gpu), and what
// `best --gpu` and `export --gpu` take for it. The one place that string is interpreted.
inline constexpr const char* kHostCpuName = "cpu";
bool is_host_cpu_name(const std::string& name);

// What the probe measured: LibTorch's matmul throughput (square matmuls, median of timed runs) in
// fp32 and bf16 (0 where bf16 matmuls fail), the bytes read plus written per second by a large
// tensor copy, and the physical memory; with the intra-op threads LibTorch used.
struct HostMeasurement {
  std::string device_name;  // the CPU's model name
  int64_t threads = 0;
  double matmul_fp32_tflops = 0.0;
  double matmul_bf16_tflops = 0.0;
  double memory_bandwidth_gb_per_s = 0.0;  // 1e9 bytes/s
  int64_t memory_bytes = 0;
  bool operator==(const HostMeasurement&) const = default;
};

// What no CPU has: a matmul throughput (TFLOP/s, one rank's threads) or a memory above these. The
// probe's figures and a stored host CPU trial are checked against them.
inline constexpr double kMaxHostTflops = 1000.0;
inline constexpr int64_t kMaxHostMemoryBytes = int64_t{1} << 50;  // 1 PiB

// Parses the probe's line, exactly {"device": "cpu", "device_name", "threads",
// "matmul_fp32_tflops", "matmul_bf16_tflops", "memory_bandwidth_gb_per_s", "memory_bytes"}.
// Throws InputError for a line that is not that object (a key missing or unknown, a wrong type) and
// for figures no CPU has: non-positive (bf16 may be 0) or absurdly large.
HostMeasurement parse_host_probe(const std::string& line);
std::string to_probe_line(const HostMeasurement& measured);  // the inverse, one JSON line

struct HostCpuOptions {
  int64_t memory_limit_bytes = 0;  // per rank (--memory-limit); 0: the physical memory
  int64_t ranks = 1;               // ranks sharing the host (its bandwidth and memory)
};

// A DeviceKind::kCpu spec named "cpu" for one rank, from a probe run with one rank's threads: its
// peaks are the measured matmul throughput (fp16: none, it is not measured), its matmul ceiling
// that peak (fraction 1, measured, so MFU on the CPU is relative to measured matmuls), its
// bandwidth its share of the measured one, its memory the cap or its share of the physical memory.
GpuSpec host_cpu_spec(const HostMeasurement& measured, const HostCpuOptions& options = {});

// When the host cannot be measured: a spec of nominal figures (50 GFLOP/s and 20 GB/s per core,
// invented) that only orders a benchmark's trials. Its peaks are not known (GpuSpec::peaks_known):
// trials on it are not checked against a ceiling and record no MFU.
GpuSpec host_cpu_stand_in(const HostCpuOptions& options = {});

}  // namespace gpudays
