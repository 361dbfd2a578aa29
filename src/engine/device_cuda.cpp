// The CUDA side of engine/device.h (CUDA builds only): synchronisation, the caching allocator's
// memory statistics, and the GPU's name, driver and compute capability through the CUDA runtime.
// The CPU side and the fallbacks of CPU builds are in device.cpp.
#include "engine/device.h"

#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <fstream>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

void check(cudaError_t rc, const char* what, int index) {
  if (rc != cudaSuccess) {
    throw std::runtime_error(
        fmt::format("CUDA {} on device {} failed: {}", what, index, cudaGetErrorString(rc)));
  }
}

void check_index(int index) {
  const int count = c10::cuda::device_count();
  if (index < 0 || index >= count) {
    throw EnvironmentError(fmt::format("no CUDA device {} (this machine has {})", index, count));
  }
}

// The kernel driver's version from /proc (e.g. "580.159.03"); "" where the file is missing.
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  std::smatch m;
  static const std::regex kVersion(R"((\d+\.\d+(\.\d+)?))");
  return std::regex_search(line, m, kVersion) ? m.str(1) : "";
}

cudaDeviceProp properties(int index) {
  check_index(index);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties", index);
  return prop;
}

}  // namespace

bool cuda_built() {
  return true;
}

// c10's count is 0 (not an error) without a driver or a GPU, and honours CUDA_VISIBLE_DEVICES.
bool cuda_available() {
  return c10::cuda::device_count() > 0;
}

int cuda_device_count() {
  return c10::cuda::device_count();
}

void cuda_synchronize(int index) {
  check_index(index);
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  c10::cuda::device_synchronize();
}

void cuda_set_device(int index) {
  check_index(index);
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
}

DeviceMemoryStats cuda_memory(int index) {
  check_index(index);
  // The caching allocator exists once LibTorch's CUDA state is initialised (the first CUDA tensor
  // does that); initialise it here so statistics can be read before any allocation.
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  DeviceMemoryStats out;
  out.allocated_bytes = stats.allocated_bytes[kAll].current;
  out.peak_allocated_bytes = stats.allocated_bytes[kAll].peak;
  out.reserved_bytes = stats.reserved_bytes[kAll].current;
  out.peak_reserved_bytes = stats.reserved_bytes[kAll].peak;
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", index);
  out.total_bytes = static_cast<int64_t>(total_bytes);
  return out;
}

void cuda_reset_peak_memory(int index) {
  check_index(index);
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index));
}

std::string cuda_device_name(int index) {
  return properties(index).name;
}

std::string cuda_driver_version() {
  int api = 0;
  check(cudaDriverGetVersion(&api), "cudaDriverGetVersion", 0);
  const std::string cuda = fmt::format("CUDA {}.{}", api / 1000, (api % 1000) / 10);
  const std::string kernel = kernel_driver_version();
  return kernel.empty() ? cuda : kernel + ", " + cuda;
}

int cuda_compute_capability(int index) {
  const cudaDeviceProp prop = properties(index);
  return prop.major * 10 + prop.minor;
}

}  // namespace gpudays
