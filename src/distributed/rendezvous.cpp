// The rendezvous from the launcher's environment: each launcher's variables as one table row, the
// store address they imply, and Slurm's node-list syntax (only its first host is needed).
#include "distributed/rendezvous.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

std::optional<std::string> variable(const char* name) {
  if (name == nullptr) return std::nullopt;
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// The value of `name` as an integer in [0, max], or nullopt when unset.
std::optional<long> int_variable(const char* name, long max = 1L << 30) {
  const std::optional<std::string> value = variable(name);
  if (!value) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(value->c_str(), &end, 10);
  if (end == value->c_str() || *end != '\0' || errno != 0 || n < 0 || n > max) {
    throw InputError(
        fmt::format("{}='{}' set by the launcher is not a rank, a count or a port", name, *value));
  }
  return n;
}

// Each launcher's variables: its ranks, this process's rank, its rank and rank count on this node,
// and a name of the job shared by its ranks (for a file store on one node).
struct LauncherVariables {
  const char* name;
  const char* size;
  const char* rank;
  const char* local_rank;  // nullptr: none
  const char* local_size;  // nullptr: none
  const char* job_id;      // nullptr: none
};
// SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: a batch script's own shell sees the allocation's task
// count but is one process; srun sets the step's. torchrun first: it may run inside an allocation.
constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", nullptr},
    {"openmpi",
     "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_RANK",
     "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE",
     "OMPI_MCA_ess_base_jobid"},
    {"mpich", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", nullptr},
    {"pmix", "PMIX_SIZE", "PMIX_RANK", nullptr, nullptr, "PMIX_NAMESPACE"},
    {"slurm", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID", nullptr, "SLURM_JOB_ID"},
};

const LauncherVariables* launcher_of_this_process() {
  if (variable("RANK") && !variable("WORLD_SIZE")) {
    throw InputError("RANK is set but WORLD_SIZE is not: set both (torchrun sets both)");
  }
  for (const LauncherVariables& v : kLaunchers) {
    if (variable(v.size)) return &v;
  }
  return nullptr;
}

RankEnvironment ranks_of(const LauncherVariables& v) {
  RankEnvironment env;
  env.world_size = static_cast<int>(std::max(1L, *int_variable(v.size)));
  const std::optional<long> rank = int_variable(v.rank);
  if (!rank) throw InputError(fmt::format("{} is set but {} is not", v.size, v.rank));
  env.rank = static_cast<int>(*rank);
  env.local_rank = static_cast<int>(int_variable(v.local_rank).value_or(0));
  if (env.rank >= env.world_size) {
    throw InputError(
        fmt::format("{}={} is not a rank among {}={}", v.rank, env.rank, v.size, env.world_size));
  }
  if (env.local_rank >= env.world_size) {
    throw InputError(fmt::format(
        "{}={} is not a rank among {}={}", v.local_rank, env.local_rank, v.size, env.world_size));
  }
  return env;
}

StoreAddress tcp_store(const LauncherVariables& v, const std::string& host, int port) {
  StoreAddress store;
  store.host = host;
  store.port = port;
  if (std::string(v.name) == "torchrun") {
    // torchrun's agent serves a TCP store on MASTER_PORT and says so; keys per restart attempt.
    store.served_by_launcher = variable("TORCHELASTIC_USE_AGENT_STORE") == "True";
    store.key_prefix =
        fmt::format("gpudays/attempt_{}/", variable("TORCHELASTIC_RESTART_COUNT").value_or("0"));
  }
  return store;
}

StoreAddress store_address(const LauncherVariables& v, const RankEnvironment& ranks) {
  if (const auto file = variable("GPUDAYS_STORE_FILE")) return StoreAddress{.file = *file};
  const std::optional<std::string> host = variable("MASTER_ADDR");
  const std::optional<long> port = int_variable("MASTER_PORT", 65535);
  if (host.has_value() != port.has_value()) {
    throw InputError(fmt::format("{} is set but {} is not: set both, rank 0's host and a free port",
                                 host ? "MASTER_ADDR" : "MASTER_PORT",
                                 host ? "MASTER_PORT" : "MASTER_ADDR"));
  }
  if (host && (host->empty() || *port == 0)) {
    throw InputError(
        fmt::format("MASTER_ADDR='{}' MASTER_PORT={}: a host and a port from 1 to "
                    "65535 are needed",
                    *host,
                    *port));
  }
  if (host) return tcp_store(v, *host, static_cast<int>(*port));
  if (std::string(v.name) == "slurm") {
    const std::optional<std::string> nodes = variable("SLURM_STEP_NODELIST")
                                                 ? variable("SLURM_STEP_NODELIST")
                                                 : variable("SLURM_JOB_NODELIST");
    const std::optional<long> job = int_variable("SLURM_JOB_ID", 1L << 62);
    if (!nodes || !job) {
      throw InputError(
          "under srun without SLURM_JOB_NODELIST and SLURM_JOB_ID: set MASTER_ADDR "
          "and MASTER_PORT");
    }
    return StoreAddress{.host = first_slurm_host(*nodes),
                        .port = 20000 + static_cast<int>(*job % 20000)};
  }
  const std::optional<long> local_size = int_variable(v.local_size);
  const std::optional<std::string> job = variable(v.job_id);
  if (local_size && *local_size == ranks.world_size && job) {
    return StoreAddress{.file = fmt::format("/tmp/gpudays-store-{}-{}", v.name, *job)};
  }
  throw InputError(
      fmt::format("{}={} ranks under {} on several nodes need MASTER_ADDR and "
                  "MASTER_PORT (rank 0's host and a free port), or GPUDAYS_STORE_FILE "
                  "on a shared path",
                  v.size,
                  ranks.world_size,
                  v.name));
}

}  // namespace

Rendezvous rendezvous_from_environment() {
  const LauncherVariables* v = launcher_of_this_process();
  if (v == nullptr) return Rendezvous{};
  Rendezvous r;
  r.launcher = v->name;
  r.ranks = ranks_of(*v);
  if (r.ranks.world_size > 1) r.store = store_address(*v, r.ranks);
  return r;
}

RankEnvironment rank_environment() {
  const LauncherVariables* v = launcher_of_this_process();
  return v == nullptr ? RankEnvironment{} : ranks_of(*v);
}

bool launched_with_several_ranks() {
  return rank_environment().world_size > 1;
}

int local_rank() {
  return rank_environment().local_rank;
}

std::string first_slurm_host(const std::string& nodelist) {
  const size_t comma = nodelist.find(',');
  const size_t open = nodelist.find('[');
  if (open == std::string::npos || (comma != std::string::npos && comma < open)) {
    const std::string host = nodelist.substr(0, comma);
    if (host.empty()) throw InputError(fmt::format("Slurm node list '{}' names no host", nodelist));
    return host;
  }
  const size_t close = nodelist.find(']', open);
  const size_t digits = nodelist.find_first_not_of("0123456789", open + 1);
  if (close == std::string::npos || digits == open + 1 || open == 0) {
    throw InputError(
        fmt::format("Slurm node list '{}' is not of the form host[1-4,7],...", nodelist));
  }
  const size_t suffix_end = nodelist.find_first_of(",[", close + 1);
  return nodelist.substr(0, open) + nodelist.substr(open + 1, digits - open - 1) +
         nodelist.substr(
             close + 1,
             suffix_end == std::string::npos ? std::string::npos : suffix_end - close - 1);
}

}  // namespace gpudays
