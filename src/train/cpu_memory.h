// Memory accounting on the CPU: an allocator for CPU tensors that counts live and peak bytes and,
// when capped, raises the same out-of-memory error type CUDA's allocator raises
// (c10::OutOfMemoryError), so the benchmark's out-of-memory search runs without a GPU.
// Installed for the lifetime of a CpuMemoryScope (RAII); the previous allocator comes back after.
#pragma once

#include <cstdint>
#include <memory>

namespace gpudays {

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
