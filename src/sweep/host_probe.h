// Measuring the host CPU once per machine: runs `gpudays trial --probe-device cpu` in a child
// process and keeps its line next to the results database, for plan and bench to share. Torch-free:
// the probe is the trial's (LibTorch), the spec from its line catalog/host_cpu.h's.
#pragma once

#include <string>
#include <vector>

#include "catalog/host_cpu.h"

namespace gpudays {

class Catalog;

struct HostProbeOptions {
  std::vector<std::string> probe_command;  // argv printing the probe's line as its last
  std::string cache_path;                  // the JSON file of probes; "": probe every time
  int64_t ranks = 1;  // ranks sharing the host: the probe runs with one rank's threads
  double time_limit_s = 120.0;
};

// The cache next to a results database: gpudays.db -> gpudays.host-cpu.json (same directory).
std::string host_probe_cache_path(const std::string& db_path);

// This host's cached measurement (same host name and a rank's OMP_NUM_THREADS: when unset, the
// host's cores split between the ranks, as the launcher gives them), else a fresh probe with those
// threads, which is then cached. Throws InputError when the probe fails (with its error line) or
// prints an invalid line, and for a cache file that is not one (naming it: delete it to probe
// again).
HostMeasurement measure_host_cpu(const HostProbeOptions& options);

// The host CPU as a device (--device cpu): this machine measured by `gpudays trial --probe-device
// cpu` (this program), or that measurement cached next to the results database `db`.
GpuSpec host_cpu_device(const std::string& db, const HostCpuOptions& options);

// The device `plan` plans on: the host CPU (--device cpu, or --gpu cpu as best and export spell
// it), measured for `ranks` ranks sharing it and kept in `host`; or the catalog GPU `gpu`. Throws
// InputError for neither or both.
struct HostProbeSite {
  std::string db;  // the probe's cache sits next to it
  int64_t ranks = 1;
};
const GpuSpec& planned_device(const Catalog& catalog,
                              const std::string& device,
                              const std::string& gpu,
                              const HostProbeSite& site,
                              GpuSpec& host);

}  // namespace gpudays
