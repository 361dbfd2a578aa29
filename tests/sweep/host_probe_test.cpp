// The host probe's child process and cache: one probe per host and OMP_NUM_THREADS, reused by every
// later call; a failed probe or a bad line is one InputError naming it; a file that is not a cache
// is named and left alone. A shell stands in for `gpudays trial --probe-device cpu`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "sweep/host_probe.h"
#include "test_util.h"

namespace gpudays {
namespace {

const char* kLine =
    R"({"device":"cpu","device_name":"Fake CPU","threads":2,"matmul_fp32_tflops":0.09,)"
    R"("matmul_bf16_tflops":0.27,"memory_bandwidth_gb_per_s":24.0,"memory_bytes":1073741824})";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A probe that prints `line` after a warning and counts its runs ("run THREADS" a line, with the
// OMP_NUM_THREADS it ran with).
struct CountingProbe {
  HostProbeOptions options;
  std::string runs_path;
  int runs() const {
    const std::string text = read(runs_path);
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
};

CountingProbe counting_probe(const std::string& name, const std::string& line) {
  const std::string runs = test::write_temp_file(name + ".runs", "");
  const std::string cache = test::write_temp_file(name + ".host-cpu.json", "");
  std::filesystem::remove(cache);
  return {{{"/bin/sh",
            "-c",
            "echo run $OMP_NUM_THREADS >> " + runs + "; echo 'a warning'; echo '" + line + "'"},
           cache},
          runs};
}

// OMP_NUM_THREADS as it was when the test began, restored at its end.
class OmpThreadsRestored {
 public:
  OmpThreadsRestored() : was_set_(std::getenv("OMP_NUM_THREADS") != nullptr) {
    if (was_set_) was_ = std::getenv("OMP_NUM_THREADS");
  }
  ~OmpThreadsRestored() {
    if (was_set_) setenv("OMP_NUM_THREADS", was_.c_str(), 1);
    if (!was_set_) unsetenv("OMP_NUM_THREADS");
  }

 private:
  bool was_set_;
  std::string was_;
};

TEST(HostProbe, ProbesOnceAndReusesTheCachedLine) {
  const OmpThreadsRestored restored;
  unsetenv("OMP_NUM_THREADS");
  const CountingProbe probe = counting_probe("probe_once", kLine);
  const HostMeasurement first = measure_host_cpu(probe.options);
  EXPECT_EQ(first.device_name, "Fake CPU");
  EXPECT_EQ(probe.runs(), 1);
  EXPECT_EQ(measure_host_cpu(probe.options), first);
  EXPECT_EQ(probe.runs(), 1) << "the second call reads the cache";
  EXPECT_NE(read(probe.options.cache_path).find("probed_at"), std::string::npos);

  setenv("OMP_NUM_THREADS", "1", 1);  // other threads, another measurement
  measure_host_cpu(probe.options);
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(probe.runs(), 2);
  measure_host_cpu(probe.options);
  EXPECT_EQ(probe.runs(), 2);

  HostProbeOptions uncached = probe.options;
  uncached.cache_path.clear();
  measure_host_cpu(uncached);
  EXPECT_EQ(probe.runs(), 3);
}

// Ranks sharing the host each compute with its cores split between them (unless OMP_NUM_THREADS
// says otherwise): the probe measures one rank's threads.
TEST(HostProbe, SeveralRanksAreProbedWithOneRanksThreads) {
  const OmpThreadsRestored restored;
  unsetenv("OMP_NUM_THREADS");
  CountingProbe probe = counting_probe("probe_ranks", kLine);
  probe.options.ranks = 2;
  measure_host_cpu(probe.options);
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(std::max<int64_t>(1, cores / 2));
  EXPECT_EQ(read(probe.runs_path), "run " + threads + "\n");
  EXPECT_NE(read(probe.options.cache_path).find("\"omp_num_threads\": \"" + threads + "\""),
            std::string::npos);
  setenv("OMP_NUM_THREADS", "3", 1);
  measure_host_cpu(probe.options);
  EXPECT_EQ(read(probe.runs_path), "run " + threads + "\nrun 3\n");
}

TEST(HostProbe, AFailedProbeOrABadLineIsOneInputError) {
  HostProbeOptions failing = counting_probe("probe_fails", kLine).options;
  failing.probe_command = {"/bin/sh", "-c", "echo 'gpudays: error: no probe here' >&2; exit 2"};
  try {
    measure_host_cpu(failing);
    FAIL() << "a failed probe measured something";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot measure the host CPU"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(": no probe here"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(failing.cache_path));
  const HostProbeOptions bad = counting_probe("probe_bad", R"({"device":"cpu"})").options;
  EXPECT_THROW(measure_host_cpu(bad), InputError);
  EXPECT_FALSE(std::filesystem::exists(bad.cache_path)) << "nothing cached";
}

// A cache that cannot be written (its folder is gone) keeps the measurement for this run and
// warns; before, the write's failure ended the measurement with an error.
TEST(HostProbe, ACacheThatCannotBeWrittenKeepsTheMeasurementAndWarns) {
  const OmpThreadsRestored restored;
  unsetenv("OMP_NUM_THREADS");
  CountingProbe probe = counting_probe("probe_unwritable", kLine);
  probe.options.cache_path = "/nonexistent-gpudays-dir/cache.host-cpu.json";
  testing::internal::CaptureStderr();
  const HostMeasurement measured = measure_host_cpu(probe.options);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(measured.device_name, "Fake CPU");
  EXPECT_NE(err.find("warning: the host CPU probe is not kept"), std::string::npos) << err;
  EXPECT_NE(err.find("/nonexistent-gpudays-dir"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(probe.options.cache_path));
}

// A cached probe whose integers are past 64 bits or fractions, or a number past a double's range
// anywhere in the cache: one InputError naming the cache file (and the key), the file left alone.
TEST(HostProbe, ACachedIntegerBeyond64BitsIsNamedWithItsFile) {
  const OmpThreadsRestored restored;
  unsetenv("OMP_NUM_THREADS");
  for (const char* value : {"10000000000000000000", "4.9e19", "-1.5", "1e400"}) {
    const CountingProbe probe = counting_probe("probe_huge", kLine);
    measure_host_cpu(probe.options);
    std::string cache = read(probe.options.cache_path);
    const std::string field = "\"memory_bytes\": 1073741824";
    ASSERT_NE(cache.find(field), std::string::npos) << cache;
    cache.replace(cache.find(field), field.size(), std::string("\"memory_bytes\": ") + value);
    std::ofstream(probe.options.cache_path) << cache;
    std::string error = "accepted";
    try {
      measure_host_cpu(probe.options);
    } catch (const InputError& e) {
      error = e.what();
    }
    EXPECT_EQ(error.rfind(probe.options.cache_path, 0), 0u) << value << ": " << error;
    if (std::string(value) != "1e400") {
      EXPECT_NE(error.find("'memory_bytes' must be an integer of 64 bits"), std::string::npos)
          << error;
    }
    EXPECT_EQ(probe.runs(), 1) << "a bad cache is not probed over";
    EXPECT_EQ(read(probe.options.cache_path), cache);
  }
}

TEST(HostProbe, AFileThatIsNotACacheIsNamedAndLeftAlone) {
  const CountingProbe probe = counting_probe("probe_not_cache", kLine);
  const std::string& cache = probe.options.cache_path;
  std::ofstream(cache) << "[1, 2, 3]";
  try {
    measure_host_cpu(probe.options);
    FAIL() << "read a file that is not a cache";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(cache), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(cache), "[1, 2, 3]");
  EXPECT_EQ(probe.runs(), 0);
}

TEST(HostProbe, TheCacheLivesNextToTheResultsDatabase) {
  EXPECT_EQ(host_probe_cache_path("gpudays.db"), "gpudays.host-cpu.json");
  EXPECT_EQ(host_probe_cache_path("out/runs.db"), "out/runs.host-cpu.json");
}

}  // namespace
}  // namespace gpudays
