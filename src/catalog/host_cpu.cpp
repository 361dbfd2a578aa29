// The host CPU's spec from its probe line. The bounds below only catch nonsense (a unit slip, a
// broken timer): the largest CPUs reach tens of TFLOP/s in matmuls and about 1 TB/s of memory
// bandwidth (HBM parts); nothing is a CPU at 1000 TFLOP/s or 20 TB/s.
#include "catalog/host_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_fields.h"
#include "common/json_text.h"

namespace gpudays {
namespace {

constexpr int64_t kMaxThreads = 4096;
constexpr double kMaxBandwidthGbPerS = 20000.0;
constexpr int64_t kMinMemoryBytes = int64_t{16} << 20;  // 16 MiB

const std::vector<std::string>& probe_keys() {
  static const std::vector<std::string> keys = {"device",
                                                "device_name",
                                                "threads",
                                                "matmul_fp32_tflops",
                                                "matmul_bf16_tflops",
                                                "memory_bandwidth_gb_per_s",
                                                "memory_bytes"};
  return keys;
}

[[noreturn]] void fail(const std::string& what) {
  throw InputError("host CPU probe: " + what);
}

nlohmann::json parse_object(const std::string& line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {  // not JSON, or a number such as 1e400
    fail(fmt::format("not a JSON line: '{}'", line.substr(0, 120)));
  }
  if (!j.is_object()) fail("not a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (std::find(probe_keys().begin(), probe_keys().end(), key) == probe_keys().end()) {
      fail(fmt::format("unknown key '{}'; keys: {}", key, join_choices(probe_keys())));
    }
  }
  for (const std::string& key : probe_keys()) {
    if (!j.contains(key)) fail(fmt::format("missing key '{}'", key));
  }
  return j;
}

// A finite number in (0, max], or [0, max] when zero is allowed.
double number(const nlohmann::json& j, const std::string& key, double max, bool zero_allowed) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number()) fail(fmt::format("'{}' must be a number", key));
  const double x = v.get<double>();
  if (!std::isfinite(x) || (zero_allowed ? x < 0.0 : x <= 0.0) || x > max) {
    fail(fmt::format("'{}' = {} is not a CPU's (expected {} and at most {})",
                     key,
                     x,
                     zero_allowed ? "0 or more" : "above 0",
                     max));
  }
  return x;
}

int64_t integer(const nlohmann::json& j, const std::string& key, int64_t min, int64_t max) {
  const std::optional<int64_t> v = json_int64(j.at(key));
  if (!v) fail(fmt::format("'{}' must be an integer of 64 bits", key));
  const int64_t x = *v;
  if (x < min || x > max) {
    fail(fmt::format("'{}' = {} is not a CPU's (expected {} to {})", key, x, min, max));
  }
  return x;
}

}  // namespace

bool is_host_cpu_name(const std::string& name) {
  return name == kHostCpuName;
}

HostMeasurement parse_host_probe(const std::string& line) {
  const nlohmann::json j = parse_object(line);
  if (j.at("device") != kHostCpuName) {
    fail(fmt::format(
        "device {} is not the host CPU (\"{}\")", json_text(j.at("device")), kHostCpuName));
  }
  if (!j.at("device_name").is_string()) fail("'device_name' must be a string");
  HostMeasurement m;
  m.device_name = j.at("device_name").get<std::string>();
  m.threads = integer(j, "threads", 1, kMaxThreads);
  m.matmul_fp32_tflops = number(j, "matmul_fp32_tflops", kMaxHostTflops, /*zero_allowed=*/false);
  m.matmul_bf16_tflops = number(j, "matmul_bf16_tflops", kMaxHostTflops, /*zero_allowed=*/true);
  m.memory_bandwidth_gb_per_s =
      number(j, "memory_bandwidth_gb_per_s", kMaxBandwidthGbPerS, /*zero_allowed=*/false);
  m.memory_bytes = integer(j, "memory_bytes", kMinMemoryBytes, kMaxHostMemoryBytes);
  return m;
}

std::string to_probe_line(const HostMeasurement& m) {
  return json_text(
      nlohmann::ordered_json{{"device", kHostCpuName},
                             {"device_name", m.device_name},
                             {"threads", m.threads},
                             {"matmul_fp32_tflops", m.matmul_fp32_tflops},
                             {"matmul_bf16_tflops", m.matmul_bf16_tflops},
                             {"memory_bandwidth_gb_per_s", m.memory_bandwidth_gb_per_s},
                             {"memory_bytes", m.memory_bytes}});
}

GpuSpec host_cpu_spec(const HostMeasurement& measured, const HostCpuOptions& options) {
  if (options.ranks < 1 || options.memory_limit_bytes < 0) {
    throw InputError(
        fmt::format("host CPU: {} ranks and a memory limit of {} bytes (need at least "
                    "1 rank and a limit of 0 or more)",
                    options.ranks,
                    options.memory_limit_bytes));
  }
  const double ranks = static_cast<double>(options.ranks);
  GpuSpec g;
  g.kind = DeviceKind::kCpu;
  g.name = kHostCpuName;
  g.display_name = fmt::format("{}, {} threads", measured.device_name, measured.threads);
  g.peak_fp32_tflops = measured.matmul_fp32_tflops;  // one rank's threads, measured
  g.peak_bf16_tflops = measured.matmul_bf16_tflops;
  g.matmul_ceiling_fraction = 1.0;  // the peaks are measured matmuls: the ceiling itself
  g.matmul_ceiling_measured = true;
  g.memory_bytes = options.memory_limit_bytes > 0 ? options.memory_limit_bytes
                                                  : measured.memory_bytes / options.ranks;
  g.memory_bandwidth_gb_per_s = measured.memory_bandwidth_gb_per_s / ranks;
  // Ranks exchange gradients, and offloading moves state, through the same memory: each byte is
  // read and written once (an assumption: half the copy bandwidth each rank has).
  g.gpu_link = "shared-memory";
  g.gpu_link_gb_per_s = g.memory_bandwidth_gb_per_s / 2.0;
  g.host_link = "shared-memory";
  g.host_link_gb_per_s = g.gpu_link_gb_per_s;
  const std::string source = "measured on this host by `gpudays trial --probe-device cpu`";
  g.sources = {{"peak_tflops", source + " (square matmuls)"},
               {"matmul_ceiling", source + " (the peaks are the ceiling)"},
               {"memory", source + " (a large tensor copy; physical memory)"},
               {"links", "assumption: half the measured copy bandwidth"}};
  return g;
}

GpuSpec host_cpu_stand_in(const HostCpuOptions& options) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t rank_cores = std::max<int64_t>(1, cores / std::max<int64_t>(1, options.ranks));
  HostMeasurement nominal;  // of one rank's cores, as a probe would measure
  nominal.device_name = "host CPU (not measured)";
  nominal.threads = rank_cores;
  nominal.matmul_fp32_tflops = nominal.matmul_bf16_tflops = 0.05 * static_cast<double>(rank_cores);
  nominal.memory_bandwidth_gb_per_s = 20.0 * static_cast<double>(cores);
  nominal.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  GpuSpec g = host_cpu_spec(nominal, options);
  g.matmul_ceiling_measured = false;
  g.sources = {{"peak_tflops", "stand-in: 50 GFLOP/s per core, invented"},
               {"memory", "stand-in: 20 GB/s per core, invented; physical memory"}};
  return g;
}

}  // namespace gpudays
