// Micro-step capture and replay (CUDA builds); eager execution elsewhere.
#include "train/cuda_graph.h"

#include <iostream>

#ifdef GPUDAYS_CUDA
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace gpudays {

#ifdef GPUDAYS_CUDA
struct MicroStepGraph::Impl {
  int warmup_calls = 0;
  int calls = 0;
  bool fell_back = false;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  at::Tensor static_loss;
};

namespace {

// Runs fn on `side`, ordered after the current stream's work and before its later work.
at::Tensor on_stream(const c10::cuda::CUDAStream& side, const std::function<at::Tensor()>& fn) {
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
  c10::cuda::CUDAEvent ready;
  ready.record(current);
  ready.block(side);
  at::Tensor out;
  {
    c10::cuda::CUDAStreamGuard guard(side);
    out = fn();
  }
  c10::cuda::CUDAEvent done;
  done.record(side);
  done.block(current);
  return out;
}

}  // namespace

at::Tensor MicroStepGraph::run(const std::function<at::Tensor()>& forward_backward) {
  Impl& s = *impl_;
  if (s.fell_back) return forward_backward();
  if (s.graph) {
    s.graph->replay();
    return s.static_loss;
  }
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  if (s.calls++ < s.warmup_calls) return on_stream(side, forward_backward);
  // Capture; autocast's weight cache must stay off while capturing.
  const bool cache = at::autocast::is_autocast_cache_enabled();
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  try {
    s.static_loss = on_stream(side, [&] {
      at::autocast::set_autocast_cache_enabled(false);
      graph->capture_begin();
      at::Tensor loss = forward_backward();
      graph->capture_end();
      return loss;
    });
    at::autocast::set_autocast_cache_enabled(cache);
    graph->replay();  // capture recorded the work without running it
    s.graph = std::move(graph);
    return s.static_loss;
  } catch (const std::exception& e) {
    at::autocast::set_autocast_cache_enabled(cache);
    std::cerr << "gpudays: CUDA graph capture failed, running eagerly: "
              << std::string(e.what()).substr(0, 200) << "\n";
    s.fell_back = true;
    s.static_loss = at::Tensor();
    return forward_backward();
  }
}

#else
struct MicroStepGraph::Impl {
  int warmup_calls = 0;
  bool fell_back = true;  // no CUDA: always eager
  bool graph = false;
};

at::Tensor MicroStepGraph::run(const std::function<at::Tensor()>& forward_backward) {
  return forward_backward();
}
#endif

MicroStepGraph::MicroStepGraph(int warmup_calls) : impl_(std::make_unique<Impl>()) {
  impl_->warmup_calls = warmup_calls;
}

MicroStepGraph::~MicroStepGraph() = default;

bool MicroStepGraph::captured() const {
  return static_cast<bool>(impl_->graph);
}

bool MicroStepGraph::fell_back() const {
  return impl_->fell_back;
}

}  // namespace gpudays
