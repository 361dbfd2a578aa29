// The host probe and its cache: {"host_cpu_probes": [{"host", "omp_num_threads", "probed_at",
// "probe": the probe's line}, ...]}, one entry per host name and a rank's OMP_NUM_THREADS (""
// when unset: LibTorch's default), which is what the probe measures. Written whole, through a
// temporary file renamed over it.
#include "sweep/host_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/input_files.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "distributed/launcher.h"

namespace gpudays {
namespace {

constexpr const char* kEntries = "host_cpu_probes";

struct CacheKey {
  std::string host;
  std::string omp_num_threads;
  bool matches(const nlohmann::json& entry) const {
    return text_of(entry, "host") == host && text_of(entry, "omp_num_threads") == omp_num_threads;
  }
  static std::string text_of(const nlohmann::json& entry, const char* key) {
    const auto it = entry.find(key);
    return it != entry.end() && it->is_string() ? it->get<std::string>() : "";
  }
};

// The threads one rank computes with, as the launcher gives them: OMP_NUM_THREADS when set; for
// several ranks on the host, its cores split between them; else LibTorch's default ("").
std::string rank_threads(int64_t ranks) {
  if (const char* set = std::getenv("OMP_NUM_THREADS")) return set;
  if (ranks <= 1) return "";
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::to_string(std::max<int64_t>(1, cores / ranks));
}

CacheKey this_host(int64_t ranks) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return {host, rank_threads(ranks)};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

nlohmann::json read_cache(const std::string& path) {
  if (path.empty() || !std::filesystem::exists(path)) return {{kEntries, nlohmann::json::array()}};
  check_input_file(path, std::uintmax_t{16} << 20, "host CPU probe caches");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    nlohmann::json cache = nlohmann::json::parse(text.str());
    const bool entries =
        cache.is_object() && cache.contains(kEntries) && cache[kEntries].is_array();
    if (entries && std::all_of(cache[kEntries].begin(),
                               cache[kEntries].end(),
                               [](const nlohmann::json& e) { return e.is_object(); })) {
      return cache;
    }
  } catch (const nlohmann::json::exception&) {  // not JSON, or a number such as 1e400
  }
  throw InputError(
      fmt::format("{} is not a host CPU probe cache (an object with \"{}\"); delete "
                  "it to probe again",
                  path,
                  kEntries));
}

// Atomically (common/output_files.h): a reader never sees half a cache. A cache that cannot be
// written costs only a probe next time: the measurement is kept for this run, with a warning.
void write_cache(const std::string& path, const nlohmann::json& cache) {
  try {
    write_file_atomically(path, json_text(cache, 2) + "\n");
  } catch (const IoError& e) {
    std::cerr << "warning: the host CPU probe is not kept (" << e.what()
              << "); it runs again next time\n";
  }
}

std::string run_probe(const HostProbeOptions& options, const std::string& threads) {
  if (options.probe_command.empty()) throw std::invalid_argument("host probe: no command");
  std::vector<std::string> argv = options.probe_command;
  if (!threads.empty()) argv.insert(argv.begin(), {"env", "OMP_NUM_THREADS=" + threads});
  const ChildResult child = run_child(argv, ChildOptions{options.time_limit_s, ""});
  if (child.exit_code == 0 && !child.signaled && !child.timed_out) return last_line(child.out);
  std::string error = last_line(child.err);
  if (const size_t at = error.find("error: "); at != std::string::npos)
    error = error.substr(at + 7);
  if (child.timed_out) error = fmt::format("no result after {:.0f} s", child.wall_s);
  throw InputError(fmt::format("cannot measure the host CPU ({}): {}",
                               fmt::join(options.probe_command, " "),
                               error.empty() ? "the probe failed" : error));
}

// A probe command that failed once in this process fails again without running: a sweep asks
// for the host CPU once per cell (a build without the trainer spawned 36 failing probes for one
// dry run). Keyed by the command and its threads, so another probe still runs.
std::map<std::string, std::string>& failed_probes() {
  static std::map<std::string, std::string> errors;
  return errors;
}

std::string probe_line(const HostProbeOptions& options, const std::string& threads) {
  const std::string key = fmt::format("{}\n{}", fmt::join(options.probe_command, "\n"), threads);
  if (const auto it = failed_probes().find(key); it != failed_probes().end()) {
    throw InputError(it->second);
  }
  try {
    return run_probe(options, threads);
  } catch (const InputError& e) {
    failed_probes().emplace(key, e.what());
    throw;
  }
}

}  // namespace

std::string host_probe_cache_path(const std::string& db_path) {
  return std::filesystem::path(db_path).replace_extension(".host-cpu.json").string();
}

HostMeasurement measure_host_cpu(const HostProbeOptions& options) {
  const CacheKey key = this_host(options.ranks);
  nlohmann::json cache = read_cache(options.cache_path);
  for (const nlohmann::json& entry : cache[kEntries]) {
    if (!key.matches(entry)) continue;
    try {
      return parse_host_probe(json_text(entry.value("probe", nlohmann::json())));
    } catch (const InputError& e) {  // the probe's figures, read from the cache: name the file
      throw InputError(
          fmt::format("{}: {} (delete the file to probe again)", options.cache_path, e.what()));
    }
  }
  const HostMeasurement measured = parse_host_probe(probe_line(options, key.omp_num_threads));
  if (options.cache_path.empty()) return measured;
  cache[kEntries].push_back({{"host", key.host},
                             {"omp_num_threads", key.omp_num_threads},
                             {"probed_at", utc_now()},
                             {"probe", nlohmann::json::parse(to_probe_line(measured))}});
  write_cache(options.cache_path, cache);
  return measured;
}

GpuSpec host_cpu_device(const std::string& db, const HostCpuOptions& options) {
  const HostProbeOptions probe{{self_path(), "trial", "--probe-device", kHostCpuName},
                               host_probe_cache_path(db),
                               options.ranks};
  return host_cpu_spec(measure_host_cpu(probe), options);
}

const GpuSpec& planned_device(const Catalog& catalog,
                              const std::string& device,
                              const std::string& gpu,
                              const HostProbeSite& site,
                              GpuSpec& host) {
  if (device != "cpu" && !is_host_cpu_name(gpu)) {
    if (gpu.empty()) throw InputError("plan needs --gpu NAME (see `gpudays gpus`) or --device cpu");
    return catalog.gpu(gpu);
  }
  if (!gpu.empty() && !is_host_cpu_name(gpu)) {
    throw InputError(fmt::format(
        "--device cpu plans on the host CPU, not on {}: leave out --gpu or --device cpu", gpu));
  }
  host = host_cpu_device(site.db, {/*memory_limit_bytes=*/0, /*ranks=*/site.ranks});
  return host;
}

}  // namespace gpudays
