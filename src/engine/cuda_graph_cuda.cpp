// CUDA's GraphBackend (CUDA builds): warm-up and capture on a side stream of the parameters'
// device, a private memory pool per graph, the device synchronised and the allocator's cache
// emptied before capture (the pool then takes the memory the eager warm-up cached), and a failed
// capture undone before the error propagates: the stream's capture ended, the device and host
// allocators' routing into the pool ended and their pools released, the random generators taken
// out of capture (torch's CUDAGraph leaves all of these to capture_end, which a failed capture
// never completes; left so, the next eager dropout would throw and pinned allocations would keep
// asking a destroyed graph whether they belong to it).
#include <ATen/autocast_mode.h>
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "engine/cuda_graph.h"

namespace gpudays {
namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;

// Runs fn on `side`, ordered after the current stream's work and before its later work.
at::Tensor on_stream(const c10::cuda::CUDAStream& side, const MicroStepFn& fn) {
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(side.device_index());
  c10::cuda::CUDAEvent ready;
  ready.record(current);
  ready.block(side);
  at::Tensor out;
  {
    const c10::cuda::CUDAStreamGuard guard(side);
    out = fn();
  }
  c10::cuda::CUDAEvent done;
  done.record(side);
  done.block(current);
  return out;
}

// Autocast's weight cache stays off while capturing (its casts must be recorded, not reused).
class AutocastCacheOff {
 public:
  AutocastCacheOff() : was_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(was_); }

 private:
  bool was_;
};

// torch's graph, with what undoing a failed capture needs of its state.
class Graph : public at::cuda::CUDAGraph {
 public:
  bool capture_ended() const { return capture_ended_; }
  // The generators capture_begin put into capture mode (capture_end's epilogue would take them
  // out): eager random draws throw while they stay in it.
  void end_generator_capture() {
    for (auto& [state, increment] : captured_generator_states_) state->capturing_ = false;
  }
};

// Calls fn, ignoring what it throws (undoing a failed capture: each step may already be done).
template <typename Fn>
void quietly(Fn fn) noexcept {
  try {
    fn();
  } catch (...) {
  }
}

class CudaGraphBackend final : public GraphBackend {
 public:
  explicit CudaGraphBackend(const c10::Device& device)
      : index_(device.has_index() ? device.index() : c10::cuda::current_device()),
        side_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index_)) {}

  at::Tensor warm_up(const MicroStepFn& fn) override {
    const c10::cuda::CUDAGuard guard(index_);
    return on_stream(side_, fn);
  }

  at::Tensor capture(const MicroStepFn& fn) override {
    const c10::cuda::CUDAGuard guard(index_);
    c10::cuda::device_synchronize();
    alloc::emptyCache();
    pool_ = at::cuda::graph_pool_handle();
    graph_ = std::make_unique<Graph>();
    try {
      return on_stream(side_, [&] {
        const AutocastCacheOff cache_off;
        graph_->capture_begin(pool_);
        at::Tensor loss = fn();
        graph_->capture_end();
        return loss;
      });
    } catch (...) {
      abort_capture();
      throw;
    }
  }

  void replay() override { graph_->replay(); }

  void release() noexcept override {
    if (!graph_) return;
    graph_.reset();  // a captured graph releases its pools here
    quietly([&] {
      const c10::cuda::CUDAGuard guard(index_);
      alloc::emptyCache();
    });
  }

 private:
  // Undoes a capture that failed. When capture_end got as far as marking it ended (instantiating
  // it failed), the graph's own reset releases both pools and its epilogue has run; otherwise the
  // stream's capture, both allocators' routing and pools, and the generators are ours to end.
  void abort_capture() noexcept {
    if (graph_ && !graph_->capture_ended()) {
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(side_.stream(), &status) == cudaSuccess &&
          status != cudaStreamCaptureStatusNone) {
        cudaGraph_t partial = nullptr;
        cudaStreamEndCapture(side_.stream(), &partial);
        if (partial != nullptr) cudaGraphDestroy(partial);
      }
      cudaGetLastError();  // the capture's error is the exception's, not the next call's
      at::HostAllocator* host = at::getHostAllocator(at::kCUDA);
      quietly([&] { alloc::endAllocateToPool(index_, pool_); });
      quietly([&] { host->end_allocate_to_pool(pool_); });
      quietly([&] { alloc::releasePool(index_, pool_); });
      quietly([&] { host->release_pool(pool_); });
      graph_->end_generator_capture();
    }
    graph_.reset();
    quietly([] { alloc::emptyCache(); });
  }

  c10::DeviceIndex index_;
  c10::cuda::CUDAStream side_;
  std::unique_ptr<Graph> graph_;
  at::cuda::MempoolId_t pool_{0, 0};
};

}  // namespace

std::unique_ptr<GraphBackend> make_cuda_graph_backend(const c10::Device& device) {
  return std::make_unique<CudaGraphBackend>(device);
}

}  // namespace gpudays
