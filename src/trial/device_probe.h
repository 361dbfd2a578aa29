// The device probe: a few seconds of LibTorch on a device that measure what a device spec needs
// (fp32 and bf16 matmul throughput, memory bandwidth, memory size), for the host CPU as for a GPU.
// `gpudays trial --probe-device` prints it as one JSON line; a spec made from it is the caller's.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gpudays {

struct DeviceProbeOptions {
  int64_t matmul_n = 0;  // square matmuls of n x n; 0: 1024 on the CPU, 8192 on CUDA
  int64_t warmup_runs = 2;
  int64_t timed_runs = 5;                   // each figure is the fastest of these
  int64_t copy_bytes = int64_t{256} << 20;  // the fp32 tensor copied for the bandwidth
};

struct DeviceProbe {
  std::string device;       // "cpu", "cuda:0"
  std::string device_name;  // the GPU's name; for the CPU its model name (/proc/cpuinfo)
  int64_t threads = 0;      // LibTorch's intra-op threads
  double matmul_fp32_tflops = 0.0;
  double matmul_bf16_tflops = 0.0;  // 0 where bf16 matmuls fail
  // Bytes read plus bytes written by a device-to-same-device copy, per second, in 1e9 bytes.
  double memory_bandwidth_gb_per_s = 0.0;
  int64_t memory_bytes = 0;  // CPU: physical memory; CUDA: the device's total memory
};

// Clocks are read after synchronising the device. TF32 is off while fp32 is timed (and restored).
// Throws InputError for options out of range.
DeviceProbe probe_device(c10::Device device, const DeviceProbeOptions& options = {});

// The probe as one JSON object, its keys in the order of DeviceProbe.
nlohmann::ordered_json to_json(const DeviceProbe& probe);

}  // namespace gpudays
