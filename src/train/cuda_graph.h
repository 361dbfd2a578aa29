// CUDA graphs for the micro-step (a free-lunch method; CUDA builds): the forward and backward of a
// micro-batch whose inputs sit in static buffers are captured once and replayed, removing the
// per-kernel launch cost. The first calls run eagerly on the capture stream (warm-up: library
// handles and workspaces are created before capture); any failure to capture (an operation that
// synchronises with the host, a build without CUDA) falls back to eager execution for good, with
// one line on stderr. Gradients must already exist (the captured backward accumulates into them).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace gpudays {

class MicroStepGraph {
 public:
  explicit MicroStepGraph(int warmup_calls = 2);
  ~MicroStepGraph();
  MicroStepGraph(const MicroStepGraph&) = delete;
  MicroStepGraph& operator=(const MicroStepGraph&) = delete;

  // Runs `forward_backward` (returns the micro-batch's loss) eagerly, by capture and replay, or by
  // replay; the tensor returned after capture is the graph's static output.
  at::Tensor run(const std::function<at::Tensor()>& forward_backward);
  bool captured() const;
  bool fell_back() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudays
