// Device helpers: the CPU side here; the CUDA side in device_cuda.cpp (CUDA builds), or the
// fallbacks below that say the build has no CUDA.
#include "engine/device.h"

#include <ATen/Context.h>

#include <fstream>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

constexpr const char* kNoCudaMessage =
    "this gpudays build has no CUDA support (build the CUDA variant: make cuda)";

#ifndef GPUDAYS_CUDA
bool cuda_built() {
  return false;
}
bool cuda_available() {
  return false;
}
int cuda_device_count() {
  return 0;
}
namespace detail {
[[noreturn]] static void no_cuda() {
  throw EnvironmentError(kNoCudaMessage);
}
}  // namespace detail
void cuda_synchronize(int) {
  detail::no_cuda();
}
void cuda_set_device(int) {
  detail::no_cuda();
}
DeviceMemoryStats cuda_memory(int) {
  detail::no_cuda();
}
void cuda_reset_peak_memory(int) {
  detail::no_cuda();
}
std::string cuda_device_name(int) {
  detail::no_cuda();
}
std::string cuda_driver_version() {
  detail::no_cuda();
}
int cuda_compute_capability(int) {
  detail::no_cuda();
}
#endif

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return "cpu: " + line.substr(line.find(':') + 2);
  }
  return "cpu";
}

int cuda_index(const c10::Device& device) {
  return device.has_index() ? device.index() : 0;
}

}  // namespace

c10::Device parse_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name != "cuda" && name.rfind("cuda:", 0) != 0) {
    throw InputError(fmt::format("unknown device '{}' (cpu, cuda or cuda:N)", name));
  }
  // What the build or the machine lacks is a runtime failure (exit 1), as a missing tool is.
  if (!cuda_built()) {
    throw EnvironmentError(kNoCudaMessage);
  }
  if (!cuda_available()) throw EnvironmentError("no CUDA GPU is visible on this machine");
  try {
    return c10::Device(name);
  } catch (const c10::Error&) {
    throw InputError(fmt::format("unknown device '{}' (cpu, cuda or cuda:N)", name));
  }
}

c10::Device rank_device(const c10::Device& requested,
                        bool several_ranks,
                        int local_rank,
                        int visible_gpus) {
  if (!requested.is_cuda()) return requested;
  const int index = !several_ranks     ? cuda_index(requested)
                    : visible_gpus > 0 ? local_rank % visible_gpus
                                       : local_rank;
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void use_device(const c10::Device& device) {
  if (device.is_cuda()) cuda_set_device(cuda_index(device));
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) cuda_synchronize(cuda_index(device));
}

DeviceMemoryStats device_memory(const c10::Device& device) {
  if (!device.is_cuda()) throw InputError("device memory statistics are for CUDA devices");
  return cuda_memory(cuda_index(device));
}

void reset_peak_memory(const c10::Device& device) {
  if (device.is_cuda()) cuda_reset_peak_memory(cuda_index(device));
}

void set_tf32(bool enabled) {
  at::globalContext().setAllowTF32CuBLAS(enabled);
  at::globalContext().setAllowTF32CuDNN(enabled);
}

bool tf32_enabled() {
  return at::globalContext().allowTF32CuBLAS();
}

std::string device_name(const c10::Device& device) {
  return device.is_cuda() ? cuda_device_name(cuda_index(device)) : cpu_model_name();
}

std::string driver_version(const c10::Device& device) {
  return device.is_cuda() ? cuda_driver_version() : std::string();
}

int compute_capability(const c10::Device& device) {
  return device.is_cuda() ? cuda_compute_capability(cuda_index(device)) : 0;
}

}  // namespace gpudays
