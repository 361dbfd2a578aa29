// The CPU memory cap: counts what tensors hold, raises c10::OutOfMemoryError at the cap, frees
// everything after and carries on.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include "engine/cpu_memory.h"

namespace gpudays {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

TEST(CpuMemory, CountsLiveAndPeakBytes) {
  CpuMemoryScope scope;
  const int64_t before = scope.stats().live_bytes;
  {
    at::Tensor a = at::empty({10 * kMiB / 4}, at::kFloat);
    EXPECT_EQ(scope.stats().live_bytes - before, 10 * kMiB);
  }
  EXPECT_EQ(scope.stats().live_bytes, before);
  EXPECT_GE(scope.stats().peak_bytes - before, 10 * kMiB);
}

TEST(CpuMemory, CapRaisesTheOutOfMemoryErrorTypeAndRecovers) {
  CpuMemoryScope scope(/*limit_bytes=*/64 * kMiB);
  const int64_t before = scope.stats().live_bytes;
  at::Tensor kept = at::zeros({32 * kMiB / 4});
  EXPECT_THROW(at::zeros({64 * kMiB / 4}), c10::OutOfMemoryError);
  EXPECT_EQ(scope.stats().failed_allocations, 1);
  EXPECT_EQ(scope.stats().live_bytes - before, 32 * kMiB);  // the failed request left nothing
  kept.reset();
  at::Tensor fits = at::zeros({48 * kMiB / 4});  // and it carries on
  EXPECT_EQ(scope.stats().live_bytes - before, 48 * kMiB);
}

TEST(CpuMemory, AllocatorIsRestoredAfterTheScope) {
  c10::Allocator* original = c10::GetCPUAllocator();
  at::Tensor survivor;
  {
    CpuMemoryScope scope(/*limit_bytes=*/8 * kMiB);
    survivor = at::ones({1024});
  }
  EXPECT_EQ(c10::GetCPUAllocator(), original);
  EXPECT_NO_THROW(at::zeros({16 * kMiB / 4}));  // no cap any more
  EXPECT_EQ(survivor.sum().item<float>(), 1024.0f);
}

}  // namespace
}  // namespace gpudays
