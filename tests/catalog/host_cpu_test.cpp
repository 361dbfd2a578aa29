// The host CPU as a device: the probe's line is parsed exactly (a missing or unknown key, a wrong
// type, a figure no CPU has: one-line InputError), and the spec built from it is a CPU kind whose
// peaks and ceiling are the measured matmuls, shared by the ranks on the host.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/host_cpu.h"
#include "common/error.h"

namespace gpudays {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// A line as `gpudays trial --probe-device cpu` prints it (figures of a 2-core development machine).
nlohmann::json probe_json() {
  return {{"device", "cpu"},
          {"device_name", "AMD EPYC"},
          {"threads", 2},
          {"matmul_fp32_tflops", 0.09},
          {"matmul_bf16_tflops", 0.27},
          {"memory_bandwidth_gb_per_s", 24.1},
          {"memory_bytes", 24 * kGiB}};
}

std::string parse_error(const nlohmann::json& line) {
  try {
    parse_host_probe(line.dump());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HostProbeLine, ParsesEveryFigureAndRoundTrips) {
  const HostMeasurement m = parse_host_probe(probe_json().dump() + "\n");
  EXPECT_EQ(m.device_name, "AMD EPYC");
  EXPECT_EQ(m.threads, 2);
  EXPECT_DOUBLE_EQ(m.matmul_fp32_tflops, 0.09);
  EXPECT_DOUBLE_EQ(m.matmul_bf16_tflops, 0.27);
  EXPECT_DOUBLE_EQ(m.memory_bandwidth_gb_per_s, 24.1);
  EXPECT_EQ(m.memory_bytes, 24 * kGiB);
  EXPECT_EQ(parse_host_probe(to_probe_line(m)), m);
  EXPECT_EQ(nlohmann::json::parse(to_probe_line(m)), probe_json());
}

TEST(HostProbeLine, MissingUnknownAndMistypedKeysAreRejected) {
  nlohmann::json missing = probe_json();
  missing.erase("memory_bytes");
  EXPECT_NE(parse_error(missing).find("missing key 'memory_bytes'"), std::string::npos);
  nlohmann::json unknown = probe_json();
  unknown["matmul_fp64_tflops"] = 0.01;
  const std::string error = parse_error(unknown);
  EXPECT_NE(error.find("unknown key 'matmul_fp64_tflops'"), std::string::npos) << error;
  EXPECT_NE(error.find("matmul_bf16_tflops"), std::string::npos) << "names the valid keys";
  nlohmann::json mistyped = probe_json();
  mistyped["threads"] = "two";
  EXPECT_NE(parse_error(mistyped).find("'threads' must be an integer"), std::string::npos);
  nlohmann::json gpu = probe_json();
  gpu["device"] = "cuda:0";
  EXPECT_NE(parse_error(gpu).find("not the host CPU"), std::string::npos);
  EXPECT_NE(parse_error(nlohmann::json::array()).find("not a JSON object"), std::string::npos);
  EXPECT_THROW(parse_host_probe("warning: no result"), InputError);
  EXPECT_THROW(parse_host_probe(""), InputError);
}

TEST(HostProbeLine, FiguresNoCpuHasAreRejected) {
  const std::vector<std::pair<std::string, nlohmann::json>> bad = {
      {"threads", 0},
      {"matmul_fp32_tflops", 0.0},
      {"matmul_fp32_tflops", -1.0},
      {"matmul_fp32_tflops", 5000.0},  // a unit slip: GFLOP/s for TFLOP/s
      {"matmul_bf16_tflops", -0.1},
      {"memory_bandwidth_gb_per_s", 0.0},
      {"memory_bandwidth_gb_per_s", 1e6},
      {"memory_bytes", 1024},
  };
  for (const auto& [key, value] : bad) {
    nlohmann::json line = probe_json();
    line[key] = value;
    const std::string error = parse_error(line);
    EXPECT_NE(error.find("'" + key + "'"), std::string::npos) << key << " = " << value;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line";
  }
  nlohmann::json no_bf16 = probe_json();
  no_bf16["matmul_bf16_tflops"] = 0.0;  // the probe's "bf16 matmuls failed"
  EXPECT_EQ(parse_host_probe(no_bf16.dump()).matmul_bf16_tflops, 0.0);
}

// Integers past 64 bits (10^19 would wrap to a negative), fractions and numbers past a double's
// range are refused with the key (or as no JSON line), never converted.
TEST(HostProbeLine, IntegersBeyond64BitsOrFractionsAreRejected) {
  for (const char* key : {"threads", "memory_bytes"}) {
    for (const char* value : {"10000000000000000000", "4.9e19", "-1.5", "1e400", "2.0"}) {
      std::string line = probe_json().dump();
      const std::string field = fmt::format("\"{}\":", key);
      const size_t at = line.find(field) + field.size();
      line.replace(at, line.find_first_of(",}", at) - at, value);
      std::string error = "accepted";
      try {
        parse_host_probe(line);
      } catch (const InputError& e) {
        error = e.what();
      }
      const std::string want = std::string(value) == "1e400"
                                   ? "not a JSON line"
                                   : fmt::format("'{}' must be an integer of 64 bits", key);
      EXPECT_NE(error.find(want), std::string::npos) << line << ": " << error;
    }
  }
}

TEST(HostCpuSpec, PeaksAreTheMeasuredMatmulsAndTheirCeiling) {
  const GpuSpec cpu = host_cpu_spec(parse_host_probe(probe_json().dump()));
  EXPECT_EQ(cpu.kind, DeviceKind::kCpu);
  EXPECT_TRUE(is_host_cpu_name(cpu.name));
  EXPECT_DOUBLE_EQ(cpu.peak_fp32_tflops, 0.09);
  EXPECT_DOUBLE_EQ(cpu.peak_bf16_tflops, 0.27);
  EXPECT_EQ(cpu.peak_fp16_tflops, 0.0) << "not measured";
  EXPECT_FALSE(cpu.supports_tf32());
  EXPECT_TRUE(cpu.supports_bf16());
  EXPECT_EQ(cpu.matmul_ceiling_fraction, 1.0);
  EXPECT_TRUE(cpu.matmul_ceiling_measured);
  EXPECT_TRUE(cpu.peaks_known());
  EXPECT_EQ(cpu.compute_capability, 0.0);
  EXPECT_DOUBLE_EQ(cpu.memory_bandwidth_gb_per_s, 24.1);
  EXPECT_EQ(cpu.memory_bytes, 24 * kGiB);
  EXPECT_EQ(cpu.purchase_usd, 0.0);
  EXPECT_EQ(cpu.cloud_usd_per_gpu_hour, 0.0);
  EXPECT_NE(cpu.display_name.find("AMD EPYC"), std::string::npos);
}

// The probe ran with one rank's threads: its peaks are the rank's; bandwidth and memory are shared.
TEST(HostCpuSpec, RanksShareTheHostAndTheCapIsPerRank) {
  const HostMeasurement m = parse_host_probe(probe_json().dump());
  const GpuSpec two = host_cpu_spec(m, {.ranks = 2});
  EXPECT_DOUBLE_EQ(two.peak_fp32_tflops, 0.09);
  EXPECT_DOUBLE_EQ(two.memory_bandwidth_gb_per_s, 12.05);
  EXPECT_EQ(two.memory_bytes, 12 * kGiB);
  const GpuSpec capped = host_cpu_spec(m, {.memory_limit_bytes = 160 << 20, .ranks = 2});
  EXPECT_EQ(capped.memory_bytes, 160 << 20);
  EXPECT_THROW(host_cpu_spec(m, {.ranks = 0}), InputError);
}

TEST(HostCpuSpec, TheStandInIsNotMeasuredSoNothingIsCheckedAgainstIt) {
  const GpuSpec stand_in = host_cpu_stand_in();
  EXPECT_EQ(stand_in.kind, DeviceKind::kCpu);
  EXPECT_TRUE(is_host_cpu_name(stand_in.name));
  EXPECT_FALSE(stand_in.matmul_ceiling_measured);
  EXPECT_FALSE(stand_in.peaks_known());
  EXPECT_GT(stand_in.memory_bytes, 0);
}

TEST(HostCpuSpec, OnlyTheHostCpuNameMeansTheHostCpu) {
  EXPECT_TRUE(is_host_cpu_name("cpu"));
  EXPECT_FALSE(is_host_cpu_name("CPU"));
  EXPECT_FALSE(is_host_cpu_name("a100"));
  EXPECT_FALSE(is_host_cpu_name(""));
}

}  // namespace
}  // namespace gpudays
