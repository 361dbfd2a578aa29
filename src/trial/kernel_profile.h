// A profile of a trial's timed steps (TrialSpec::profile_path): torch's Kineto profiler runs
// around them; the trace is saved as Chrome trace JSON at the path (Perfetto or chrome://tracing
// open it) and a summary beside it, PATH.kernels.tsv: per kind and name, the events' count and
// total microseconds over the timed steps, and per step, largest first. Kinds: gpu_kernel,
// gpu_memcpy and gpu_memset, the GPU's own activity as it ran (what `plan --ops` predicts,
// operation by operation; streams summed, so overlapping kernels can add up past the step);
// cpu_op, torch's operators on the host, each inclusive of the operators it calls; cuda_runtime,
// the host's CUDA runtime and driver calls (launches, synchronisations). Asynchronous spans (a
// collective's life) and zero-length marks are left out.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace gpudays {

class KernelProfile {
 public:
  // Prepares the profiler for `device`'s work and the host's (`path` not empty): a step ahead of
  // start(), so that the profiler's own set-up does not land in the first profiled step.
  KernelProfile(std::string path, c10::Device device);
  ~KernelProfile();  // a profile still running stops unsaved (a trial that threw)
  KernelProfile(const KernelProfile&) = delete;
  KernelProfile& operator=(const KernelProfile&) = delete;

  void start();  // records from here (the device synchronised first)
  // Stops and writes the trace and the summary, `steps` timed steps having run; once.
  void finish(int64_t steps);

 private:
  std::string path_;
  c10::Device device_;
  bool running_ = false;
};

}  // namespace gpudays
