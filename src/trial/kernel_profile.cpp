// The timed steps' profile: Kineto around them, the Chrome trace and a per-name summary.
#include "trial/kernel_profile.h"

#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/error.h"
#include "engine/device.h"

namespace gpudays {
namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::set<ActivityType> activities(c10::Device device) {
  std::set<ActivityType> a{ActivityType::CPU};
  if (device.is_cuda()) a.insert(ActivityType::CUDA);
  return a;
}

struct NameTotal {
  int64_t count = 0;
  uint64_t total_ns = 0;
};

// The summary's kind of an event, or "" for one it leaves out.
std::string kind_of(const profiler::KinetoEvent& e) {
  if (e.isAsync() || e.endNs() <= e.startNs()) return "";
  switch (static_cast<libkineto::ActivityType>(e.activityType())) {
    case libkineto::ActivityType::CONCURRENT_KERNEL:
      return "gpu_kernel";
    case libkineto::ActivityType::GPU_MEMCPY:
      return "gpu_memcpy";
    case libkineto::ActivityType::GPU_MEMSET:
      return "gpu_memset";
    case libkineto::ActivityType::CPU_OP:
      return "cpu_op";
    case libkineto::ActivityType::CUDA_RUNTIME:
    case libkineto::ActivityType::CUDA_DRIVER:
      return "cuda_runtime";
    default:
      return "";
  }
}

// PATH.kernels.tsv: kind, name, count, total and per-step microseconds, largest total first.
void write_summary(const std::string& path,
                   const std::vector<profiler::KinetoEvent>& events,
                   int64_t steps) {
  std::map<std::pair<std::string, std::string>, NameTotal> totals;
  for (const profiler::KinetoEvent& e : events) {
    const std::string kind = kind_of(e);
    if (kind.empty()) continue;
    NameTotal& t = totals[{kind, e.name()}];
    ++t.count;
    t.total_ns += e.durationNs();
  }
  std::vector<std::pair<std::pair<std::string, std::string>, NameTotal>> rows(totals.begin(),
                                                                              totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.total_ns > b.second.total_ns;
  });
  std::ofstream out(path);
  out << "kind\tname\tcount\ttotal_us\tus_per_step\n";
  const double per_step = 1.0 / static_cast<double>(std::max<int64_t>(steps, 1));
  for (const auto& [key, t] : rows) {
    std::string name = key.second;
    std::replace(name.begin(), name.end(), '\t', ' ');
    std::replace(name.begin(), name.end(), '\n', ' ');
    out << fmt::format("{}\t{}\t{}\t{:.1f}\t{:.1f}\n",
                       key.first,
                       name,
                       t.count,
                       static_cast<double>(t.total_ns) / 1e3,
                       static_cast<double>(t.total_ns) / 1e3 * per_step);
  }
  out.close();
  if (!out) throw EnvironmentError(fmt::format("{}: cannot write the profile's summary", path));
}

}  // namespace

KernelProfile::KernelProfile(std::string path, c10::Device device)
    : path_(std::move(path)), device_(device) {
  if (!path_.empty())
    profiler::prepareProfiler(ProfilerConfig(ProfilerState::KINETO), activities(device_));
}

void KernelProfile::start() {
  if (path_.empty() || running_) return;
  synchronize(device_);
  profiler::enableProfiler(ProfilerConfig(ProfilerState::KINETO), activities(device_));
  running_ = true;
}

KernelProfile::~KernelProfile() {
  if (!running_) return;
  try {
    profiler::disableProfiler();
  } catch (...) {  // a profile that cannot stop must not hide the trial's own error
  }
}

void KernelProfile::finish(int64_t steps) {
  if (!running_) return;
  synchronize(device_);
  running_ = false;
  const std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
  std::filesystem::remove(path_);  // torch only logs a trace it cannot write
  result->save(path_);
  if (!std::filesystem::exists(path_)) {
    throw EnvironmentError(fmt::format("{}: torch's profiler did not write its trace", path_));
  }
  write_summary(path_ + ".kernels.tsv", result->events(), steps);
}

}  // namespace gpudays
