// Slurm's commands as child processes, and the parsing of what they print.
#include "slurm/slurm_control.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "common/child_process.h"
#include "common/error.h"
#include "common/units.h"
#include "slurm/slurm_job.h"

namespace gpudays {
namespace {

constexpr double kCommandTimeoutS = 60.0;
constexpr double kPingTimeoutS = 20.0;  // a controller that is up answers at once

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

ChildResult run(const std::vector<std::string>& argv) {
  return run_child(argv, ChildOptions{kCommandTimeoutS, ""});
}

bool succeeded(const ChildResult& r) {
  return !r.timed_out && !r.signaled && r.exit_code == 0;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

// "gpu:a100:4(S:0-1),tmp:10" -> 4 for GRES `gpu`; 0 when absent.
int64_t gpus_in_gres(const std::string& gres) {
  for (const std::string& item : split(gres, ',')) {
    const std::string plain = item.substr(0, item.find('('));
    if (plain.rfind("gpu", 0) != 0) continue;
    const size_t colon = plain.rfind(':');
    if (colon == std::string::npos) return 1;
    try {
      return std::stoll(plain.substr(colon + 1));
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

int64_t int_or_zero(const std::string& text) {
  try {
    return std::stoll(text);  // sinfo prints "2+" for mixed nodes: the smallest
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

void check_slurm_reachable() {
  for (const char* tool : {"sbatch", "squeue", "scontrol"}) {
    if (!on_path(tool)) {
      throw InputError(fmt::format(
          "Slurm is not installed here ({} is not on PATH); nothing was submitted (--dry-run "
          "prints the script)",
          tool));
    }
  }
  // Slurm's commands retry a missing configuration file for a minute before they give up.
  const char* conf = std::getenv("SLURM_CONF");
  if (conf != nullptr && *conf != '\0' && access(conf, R_OK) != 0) {
    throw InputError(fmt::format(
        "no Slurm controller reachable: SLURM_CONF={} cannot be read; nothing was submitted",
        conf));
  }
  const ChildResult ping = run_child({"scontrol", "ping"}, ChildOptions{kPingTimeoutS, ""});
  if (!succeeded(ping) || ping.out.find("UP") == std::string::npos) {
    std::string why = last_line(ping.err.empty() ? ping.out : ping.err);
    if (ping.timed_out) why = fmt::format("no answer within {:.0f} s", kPingTimeoutS);
    throw InputError(
        fmt::format("no Slurm controller reachable (scontrol ping: {}); nothing was "
                    "submitted",
                    why.empty() ? "no answer" : why));
  }
}

std::vector<SlurmPartition> parse_sinfo_partitions(const std::string& text) {
  std::vector<SlurmPartition> out;
  for (const std::string& line : split(text, '\n')) {
    const std::vector<std::string> f = split(line, '|');
    if (f.size() < 6) continue;
    std::string name = f[0];
    if (!name.empty() && name.back() == '*') name.pop_back();  // the default partition
    bool seen = false;
    for (const SlurmPartition& p : out) seen = seen || p.name == name;
    if (seen) continue;  // several node kinds: the first line's
    SlurmPartition p;
    p.name = name;
    p.cpus_per_node = int_or_zero(f[1]);
    p.memory_per_node_bytes = static_cast<double>(int_or_zero(f[2])) * 1024.0 * 1024.0;
    p.gpus_per_node = gpus_in_gres(f[3]);
    p.max_time_s = f[4] == "infinite" || f[4].empty() ? 0.0 : parse_slurm_time_s(f[4]);
    p.nodes = int_or_zero(f[5]);
    out.push_back(p);
  }
  return out;
}

std::vector<SlurmPartition> query_partitions() {
  const ChildResult r = run({"sinfo", "-h", "-o", "%R|%c|%m|%G|%l|%D"});
  if (!succeeded(r)) throw InputError("sinfo failed: " + last_line(r.err));
  return parse_sinfo_partitions(r.out);
}

std::string submit_sbatch(const std::string& script_path) {
  const ChildResult r = run({"sbatch", "--parsable", script_path});
  const std::string id = last_line(r.out).substr(0, last_line(r.out).find(';'));
  if (!succeeded(r) || id.empty() || id.find_first_not_of("0123456789_") != std::string::npos) {
    throw EnvironmentError(
        fmt::format("sbatch refused {}: {}", script_path, last_line(r.err + "\n" + r.out)));
  }
  return id;
}

std::map<std::string, std::string> query_job_states(const std::vector<std::string>& job_ids) {
  std::map<std::string, std::string> states;
  for (const std::string& id : job_ids) {  // one at a time: squeue drops a list with a stale id
    const ChildResult r = run({"squeue", "-h", "-t", "all", "-j", id, "-o", "%i|%T"});
    for (const std::string& line : split(r.out, '\n')) {
      const std::vector<std::string> f = split(line, '|');
      if (f.size() == 2 && f[0] == id) states[id] = f[1];
    }
  }
  return states;
}

void cancel_job(const std::string& job_id) {
  const ChildResult r = run({"scancel", job_id});
  if (!succeeded(r)) {
    throw EnvironmentError(fmt::format("scancel {} failed: {}", job_id, last_line(r.err)));
  }
}

}  // namespace gpudays
