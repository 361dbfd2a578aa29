// A profile of a trial's timed steps (TrialSpec::profile_path): torch's Kineto profiler runs
// around them; the trace is saved as Chrome trace JSON at the path (Perfetto or chrome://tracing
// open it) and a summary beside it, PATH.kernels.tsv: per device and name, the events' count and
// total microseconds over the timed steps, and per step, largest first. On a GPU the CUDA rows are
// the kernels, copies and memsets as the GPU ran them (what `plan --ops` predicts, operation by
// operation); the CPU rows are torch's operators, their times inclusive of the operators they call.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace gpudays {

class KernelProfile {
 public:
  // Starts profiling `device`'s work (and the host's operators) when `path` is not empty.
  KernelProfile(std::string path, c10::Device device);
  ~KernelProfile();  // a profile still running stops unsaved (a trial that threw)
  KernelProfile(const KernelProfile&) = delete;
  KernelProfile& operator=(const KernelProfile&) = delete;

  // Stops and writes the trace and the summary, `steps` timed steps having run; once.
  void finish(int64_t steps);

 private:
  std::string path_;
  c10::Device device_;
  bool running_ = false;
};

}  // namespace gpudays
