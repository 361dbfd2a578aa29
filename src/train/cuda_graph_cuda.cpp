// CUDA's GraphBackend (CUDA builds): warm-up and capture on a side stream of the parameters'
// device, a private memory pool per graph, the device synchronised and the allocator's cache
// emptied before capture (the pool then takes the memory the eager warm-up cached), and a failed
// capture ended and its pool released before the error propagates, so that the stream is usable
// and the allocator routes allocations normally again (torch's capture_end leaves both undone
// when the capture was invalidated).
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "train/cuda_graph.h"

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
    graph_ = std::make_unique<at::cuda::CUDAGraph>();
    ended_ = false;
    try {
      return on_stream(side_, [&] {
        const AutocastCacheOff cache_off;
        graph_->capture_begin(pool_);
        at::Tensor loss = fn();
        graph_->capture_end();
        ended_ = true;
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
    graph_.reset();  // an ended capture releases its pool here
    try {
      const c10::cuda::CUDAGuard guard(index_);
      alloc::emptyCache();
    } catch (...) {
    }
  }

 private:
  // Ends a capture that failed: the stream's capture, the allocator's routing into the pool, the
  // pool itself. Each step may already be done (capture_end fails after ending the stream's).
  void abort_capture() noexcept {
    if (ended_) return;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(side_.stream(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(side_.stream(), &partial);
      if (partial != nullptr) cudaGraphDestroy(partial);
    }
    cudaGetLastError();  // the capture's error is the exception's, not the next call's
    try {
      alloc::endAllocateToPool(index_, pool_);
    } catch (...) {  // capture_end got that far
    }
    try {
      alloc::releasePool(index_, pool_);
    } catch (...) {
    }
    graph_.reset();
    try {
      alloc::emptyCache();
    } catch (...) {
    }
  }

  c10::DeviceIndex index_;
  c10::cuda::CUDAStream side_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  at::cuda::MempoolId_t pool_{0, 0};
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<GraphBackend> make_cuda_graph_backend(const c10::Device& device) {
  return std::make_unique<CudaGraphBackend>(device);
}

}  // namespace gpudays
