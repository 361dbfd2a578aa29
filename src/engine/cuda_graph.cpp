// MicroStepGraph's sequence (warm-up, capture, replay, fallback) and the CPU stand-in backend.
// CUDA's backend is in cuda_graph_cuda.cpp.
#include "engine/cuda_graph.h"

#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>

#include <iostream>

#include "common/error.h"

namespace gpudays {
namespace {

class RerunGraphBackend final : public GraphBackend {
 public:
  at::Tensor warm_up(const MicroStepFn& fn) override { return fn(); }
  at::Tensor capture(const MicroStepFn& fn) override {
    fn_ = fn;
    output_ = at::zeros({}, at::kFloat);
    return output_;
  }
  void replay() override { output_.copy_(fn_()); }
  void release() noexcept override {
    fn_ = nullptr;
    output_ = at::Tensor();
  }

 private:
  MicroStepFn fn_;
  at::Tensor output_;
};

}  // namespace

std::unique_ptr<GraphBackend> make_rerun_graph_backend() {
  return std::make_unique<RerunGraphBackend>();
}

#ifndef GPUDAYS_CUDA
std::unique_ptr<GraphBackend> make_cuda_graph_backend(const c10::Device&) {
  throw InputError("CUDA graphs need the CUDA build");
}
#endif

MicroStepGraph::MicroStepGraph(std::unique_ptr<GraphBackend> backend, int warmup_calls)
    : backend_(std::move(backend)), warmup_calls_(warmup_calls) {}

MicroStepGraph::~MicroStepGraph() {
  if (backend_) backend_->release();
}

// Inputs whose shape keeps changing would be captured again every step: after kMaxRecaptures the
// micro-step runs eagerly for good.
constexpr int kMaxRecaptures = 2;

void MicroStepGraph::invalidate() {
  if (fell_back()) return;
  if (captured_ && ++recaptures_ > kMaxRecaptures) {
    fallback_reason_ = "the micro-batch's shape changes between steps";
    std::cerr << "gpudays: CUDA graph dropped, running eagerly: " << fallback_reason_ << "\n";
  }
  backend_->release();
  captured_ = false;
  calls_ = 0;
  static_loss_ = at::Tensor();
}

at::Tensor MicroStepGraph::run(const MicroStepFn& fn) {
  if (fell_back()) {
    ++counts_.eager_calls;
    return fn();
  }
  if (captured_) {
    backend_->replay();
    ++counts_.replays;
    return static_loss_;
  }
  if (calls_ < warmup_calls_) {
    ++calls_;
    ++counts_.eager_calls;
    return backend_->warm_up(fn);
  }
  try {
    static_loss_ = backend_->capture(fn);
    ++counts_.captures;
    captured_ = true;
  } catch (const c10::OutOfMemoryError&) {
    backend_->release();  // the backend freed the capture's memory; the caller records oom
    throw;
  } catch (const std::exception& e) {
    backend_->release();
    fallback_reason_ = one_line(e);
    std::cerr << "gpudays: CUDA graph capture failed, running eagerly: " << fallback_reason_
              << "\n";
    ++counts_.eager_calls;
    return fn();
  }
  backend_->replay();  // capture recorded the micro-step without running it
  ++counts_.replays;
  return static_loss_;
}

}  // namespace gpudays
