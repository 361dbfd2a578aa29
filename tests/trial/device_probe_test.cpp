// The device probe: `gpudays trial --probe-device cpu` prints one JSON line with exactly the
// probe's keys and physically plausible figures; options out of range are refused.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/child_process.h"
#include "common/error.h"
#include "trial/device_probe.h"

namespace gpudays {
namespace {

TEST(DeviceProbe, TheCpuProbeIsOneLineOfPlausibleFigures) {
  const ChildResult r =
      run_child({GPUDAYS_BINARY, "trial", "--probe-device", "cpu"}, ChildOptions{120.0, ""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  EXPECT_EQ(keys,
            (std::set<std::string>{"device",
                                   "device_name",
                                   "threads",
                                   "matmul_fp32_tflops",
                                   "matmul_bf16_tflops",
                                   "memory_bandwidth_gb_per_s",
                                   "memory_bytes"}));
  EXPECT_EQ(j["device"], "cpu");
  const std::string name = j["device_name"];
  EXPECT_FALSE(name.empty());
  EXPECT_NE(name.rfind("cpu: ", 0), 0u) << name;  // the model name itself
  const int64_t threads = j["threads"];
  ASSERT_GE(threads, 1);
  // fp32: at least 1 GFLOP/s; at most 1 TFLOP/s per thread, about 3x an AVX-512 core's peak
  // (2 FMA units x 16 lanes x 2 operations x 5 GHz = 0.32 TFLOP/s).
  const double fp32 = j["matmul_fp32_tflops"];
  EXPECT_GE(fp32, 1e-3);
  EXPECT_LE(fp32, 1.0 * threads);
  // bf16: 0 where it fails; AMX reaches a few TFLOP/s per core.
  const double bf16 = j["matmul_bf16_tflops"];
  EXPECT_GE(bf16, 0.0);
  EXPECT_LE(bf16, 10.0 * threads);
  const double bandwidth = j["memory_bandwidth_gb_per_s"];
  EXPECT_GE(bandwidth, 0.5);
  EXPECT_LE(bandwidth, 1000.0);
  const int64_t memory = j["memory_bytes"];
  EXPECT_GE(memory, int64_t{512} << 20);
  EXPECT_LE(memory, int64_t{64} << 40);
}

TEST(DeviceProbe, OptionsOutOfRangeAreRefused) {
  EXPECT_THROW(probe_device(c10::kCPU, {.matmul_n = 64, .warmup_runs = 0, .timed_runs = 0}),
               InputError);
  EXPECT_THROW(probe_device(c10::kCPU, {.matmul_n = -1}), InputError);
  const DeviceProbe small = probe_device(
      c10::kCPU, {.matmul_n = 64, .warmup_runs = 1, .timed_runs = 1, .copy_bytes = 1 << 20});
  EXPECT_GT(small.matmul_fp32_tflops, 0.0);
  EXPECT_GT(small.memory_bandwidth_gb_per_s, 0.0);
}

}  // namespace
}  // namespace gpudays
