// Memory accounting on the CPU: an allocator for CPU tensors that counts live and peak bytes and,
// when capped, raises the same out-of-memory error type CUDA's allocator raises
// (c10::OutOfMemoryError), so the benchmark's out-of-memory search runs without a GPU.
// Installed for the lifetime of a CpuMemoryScope (RAII); the previous allocator comes back after.
#pragma once

#include <cstdint>
#include <memory>

namespace gpudays {

// Keeps the C allocator's freed memory in the process, as the CUDA caching allocator keeps its
// blocks: no allocation is served by mmap(2) (glibc's M_MMAP_MAX = 0) and the heap is never trimmed
// (M_TRIM_THRESHOLD at its largest). With glibc's defaults every tensor above the dynamic mmap
// threshold (up to 32 MiB), and every activation that grows the heap past the trim threshold, is
// new pages in each training step, each faulted in and zeroed by the kernel: 12% of a small
// GPT-NeoX step and 22% of a small Mamba step on the development machine (docs/bench.md). Called
// by a process that trains on the CPU (the trial runner, the trainer) before its first step;
// affects the whole process and is never undone. A no-op with another C library.
void keep_freed_host_memory();

struct CpuMemoryStats {
  int64_t live_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t limit_bytes = 0;  // 0: no cap
  int64_t failed_allocations = 0;
};

class CpuMemoryScope {
 public:
  explicit CpuMemoryScope(int64_t limit_bytes = 0);
  CpuMemoryScope(const CpuMemoryScope&) = delete;
  CpuMemoryScope& operator=(const CpuMemoryScope&) = delete;
  ~CpuMemoryScope();

  CpuMemoryStats stats() const;
  void reset_peak();  // peak := live

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpudays
