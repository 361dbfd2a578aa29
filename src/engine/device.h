// The device a trial or the engine runs on: synchronisation before clock reads, memory statistics,
// TF32 switches, and the device's name and driver for a result's provenance. CPU devices need no
// synchronisation and report memory through engine/cpu_memory.h; CUDA devices (CUDA builds only)
// report the caching allocator's statistics.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace gpudays {

bool cuda_built();      // this build links the CUDA LibTorch
bool cuda_available();  // ... and a GPU is visible

// Parses "cpu", "cuda" or "cuda:N"; throws InputError for anything else, and for CUDA devices in
// a build without CUDA or on a machine without a GPU.
c10::Device parse_device(const std::string& name);

// This rank's device: a CUDA device always with its index, the requested one (cuda: cuda:0) with
// one rank, with several the GPU of the rank's local rank among the `visible_gpus` the process
// sees (cuda:local_rank on a node whose ranks all see every GPU; cuda:0 where each rank sees only
// its own, as with srun --gpus-per-task=1); the CPU as it is.
c10::Device rank_device(const c10::Device& requested,
                        bool several_ranks,
                        int local_rank,
                        int visible_gpus);
int cuda_device_count();  // the GPUs this process sees (0 without CUDA)
// Makes a CUDA device the current one (before any CUDA work of the rank: streams, graphs, NCCL's
// communicator and the caching allocator take the current device); no-op on the CPU.
void use_device(const c10::Device& device);

// Waits until every kernel queued on the device has finished (no-op on the CPU).
void synchronize(const c10::Device& device);

struct DeviceMemoryStats {
  int64_t allocated_bytes = 0;       // live tensor bytes now
  int64_t peak_allocated_bytes = 0;  // since the last reset
  int64_t reserved_bytes = 0;        // held by the caching allocator
  int64_t peak_reserved_bytes = 0;   // since the last reset (what the device had to give)
  int64_t total_bytes = 0;           // the device's memory
};
// CUDA devices only; throws InputError for the CPU (use CpuMemoryScope there).
DeviceMemoryStats device_memory(const c10::Device& device);
void reset_peak_memory(const c10::Device& device);

// TF32 for fp32 matmuls and convolutions (a free-lunch method; Ampere and newer).
void set_tf32(bool enabled);
bool tf32_enabled();

std::string device_name(const c10::Device& device);     // "cpu: <model name>" or the GPU's name
std::string driver_version(const c10::Device& device);  // "" on the CPU
// CUDA compute capability as major * 10 + minor (0 on the CPU).
int compute_capability(const c10::Device& device);

// The CUDA side behind the calls above, by device index: engine/device_cuda.cpp in CUDA builds;
// elsewhere they throw InputError (the build has no CUDA).
void cuda_synchronize(int index);
void cuda_set_device(int index);
DeviceMemoryStats cuda_memory(int index);
void cuda_reset_peak_memory(int index);
std::string cuda_device_name(int index);
std::string cuda_driver_version();  // "<kernel driver>, CUDA <driver API version>"
int cuda_compute_capability(int index);

}  // namespace gpudays
