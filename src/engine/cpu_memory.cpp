// The tracking CPU allocator. Blocks remember their size and their counters, so a tensor freed
// after the scope ends is still accounted correctly.
#include "engine/cpu_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <climits>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

namespace gpudays {
namespace {

struct Counters {
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> peak{0};
  std::atomic<int64_t> failed{0};
  int64_t limit = 0;
};

// Each block carries a header in front of its data, so the data pointer is also the deleter's
// context (PyTorch's raw_allocate requires it) and freeing finds its size and counters in O(1).
// Counters live as long as the process: a tensor may outlive the scope that allocated it.
struct alignas(64) Header {
  int64_t bytes;
  Counters* counters;
};
static_assert(sizeof(Header) == 64);

void free_block(void* data) {
  if (data == nullptr) return;
  auto* header = static_cast<Header*>(data) - 1;
  header->counters->live -= header->bytes;
  c10::free_cpu(header);
}

class TrackingAllocator final : public c10::Allocator {
 public:
  explicit TrackingAllocator(Counters* counters) : counters_(counters) {}

  c10::DataPtr allocate(size_t n) override {
    const int64_t bytes = static_cast<int64_t>(n);
    const int64_t live = counters_->live.fetch_add(bytes) + bytes;
    if (counters_->limit > 0 && live > counters_->limit) {
      counters_->live -= bytes;
      ++counters_->failed;
      TORCH_CHECK_WITH(OutOfMemoryError,
                       false,
                       fmt::format("CPU out of memory: tried to allocate {} bytes with {} of the "
                                   "{}-byte limit in use",
                                   bytes,
                                   live - bytes,
                                   counters_->limit));
    }
    int64_t peak = counters_->peak.load();
    while (live > peak && !counters_->peak.compare_exchange_weak(peak, live)) {
    }
    auto* header = static_cast<Header*>(c10::alloc_cpu(sizeof(Header) + n));
    header->bytes = bytes;
    header->counters = counters_;
    void* data = header + 1;
    return {data, data, &free_block, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  Counters* counters_;
};

}  // namespace

void keep_freed_host_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

struct CpuMemoryScope::State {
  Counters* counters = new Counters();  // never freed: blocks may outlive the scope
  std::unique_ptr<TrackingAllocator> allocator;
  c10::Allocator* previous = nullptr;
};

CpuMemoryScope::CpuMemoryScope(int64_t limit_bytes) : state_(std::make_unique<State>()) {
  state_->counters->limit = limit_bytes;
  state_->allocator = std::make_unique<TrackingAllocator>(state_->counters);
  state_->previous = c10::GetCPUAllocator();
  c10::SetCPUAllocator(state_->allocator.get(), /*priority=*/100);
}

CpuMemoryScope::~CpuMemoryScope() {
  c10::SetCPUAllocator(state_->previous, /*priority=*/100);
  // Tensors still alive keep the counters alive through their blocks; the allocator object is
  // not needed to free them. It must outlive any tensor that asks it for copy_data, so keep it.
  static std::vector<std::unique_ptr<TrackingAllocator>> retired;
  retired.push_back(std::move(state_->allocator));
}

CpuMemoryStats CpuMemoryScope::stats() const {
  const Counters& c = *state_->counters;
  return {c.live.load(), c.peak.load(), c.limit, c.failed.load()};
}

void CpuMemoryScope::reset_peak() {
  state_->counters->peak = state_->counters->live.load();
}

}  // namespace gpudays
