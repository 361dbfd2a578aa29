// CUDA graphs for the micro-step (a free-lunch method): the forward and backward of a micro-batch
// whose inputs sit in static buffers are captured once and replayed, removing the per-kernel launch
// cost. MicroStepGraph is the device-agnostic sequence (eager warm-up calls, one capture, replays,
// or eager for good after a failed capture); a GraphBackend records and replays on a device: CUDA's
// (cuda_graph_cuda.cpp, CUDA builds) or a CPU stand-in whose replay re-runs the micro-step, so that
// the sequence, the engine's use of it and the step loop's warm-up are tested without a GPU.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gpudays {

// A micro-step: forward and backward from the static input buffers; returns the loss ([], fp32).
using MicroStepFn = std::function<at::Tensor()>;

// Records and replays one micro-step on a device.
class GraphBackend {
 public:
  virtual ~GraphBackend() = default;
  // An eager call before capture (CUDA: on the capture stream, so that library handles and
  // workspaces exist before capture).
  virtual at::Tensor warm_up(const MicroStepFn& fn) = 0;
  // Records fn without running it and returns its static output. Any exception ends the capture
  // and frees what it allocated before it propagates (an out-of-memory error unchanged).
  virtual at::Tensor capture(const MicroStepFn& fn) = 0;
  virtual void replay() = 0;
  virtual void release() noexcept = 0;  // frees the graph and its memory pool
};

// CUDA's backend for `device` (CUDA builds; elsewhere throws InputError).
std::unique_ptr<GraphBackend> make_cuda_graph_backend(const c10::Device& device);
// The CPU stand-in: capture remembers fn, replay runs it again into the static output.
std::unique_ptr<GraphBackend> make_rerun_graph_backend();

struct GraphCounts {
  int64_t eager_calls = 0;  // warm-up calls and calls after a fallback
  int64_t captures = 0;
  int64_t replays = 0;  // the capture's own replay included
  bool operator==(const GraphCounts&) const = default;
};

class MicroStepGraph {
 public:
  explicit MicroStepGraph(std::unique_ptr<GraphBackend> backend, int warmup_calls = 2);
  ~MicroStepGraph();
  MicroStepGraph(const MicroStepGraph&) = delete;
  MicroStepGraph& operator=(const MicroStepGraph&) = delete;

  // Runs the micro-step eagerly, by capture and replay, or by replay; the tensor returned after
  // capture is the graph's static output. An out-of-memory error during capture propagates (the
  // caller's result: the micro-batch is too large); any other capture failure falls back to eager
  // execution for good, with one line on stderr.
  at::Tensor run(const MicroStepFn& fn);
  // The static inputs moved (new buffers): the graph is released and warmed up again (after a
  // few such changes of a captured graph, the micro-step runs eagerly for good).
  void invalidate();

  bool captured() const { return captured_; }
  bool fell_back() const { return !fallback_reason_.empty(); }
  const std::string& fallback_reason() const { return fallback_reason_; }
  GraphCounts counts() const { return counts_; }
  // Micro-steps before the first replay that is not a capture's own: the warm-up calls and the
  // capture. Steps timed after this many micro-steps are replays.
  int64_t micro_steps_before_replay() const { return warmup_calls_ + 1; }

 private:
  std::unique_ptr<GraphBackend> backend_;
  int warmup_calls_;
  int calls_ = 0;       // since the last invalidation
  int recaptures_ = 0;  // invalidations of a captured graph
  bool captured_ = false;
  std::string fallback_reason_;
  at::Tensor static_loss_;
  GraphCounts counts_;
};

}  // namespace gpudays
