// Loading a cluster file with the catalog's checked TOML access (every key named in its errors,
// unknown keys rejected), and the look-up of a partition.
#include "slurm/cluster_file.h"

#include <algorithm>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "catalog/gpu_loader.h"
#include "catalog/toml_document.h"
#include "catalog/toml_fields.h"
#include "common/error.h"
#include "common/units.h"
#include "search_space/search_space.h"
#include "slurm/slurm_job.h"

namespace gpudays {
namespace {

// CPU cores per node: --cpu-cores-per-gpu's bound (4096) times the GPUs a node may have.
constexpr int64_t kMaxCpusPerNode = 4096 * kMaxGpusPerNode;

double non_negative(const TomlFields& t, std::string_view key) {
  const double value = t.get_double_or(key, 0.0);
  if (!(value >= 0.0)) t.fail(key, fmt::format("{} is negative", value));
  return value;
}

// A count or figure the file may leave out (0 in the struct: unknown) but, when it gives one,
// within [low, high], the bounds of the flag it stands for: a 0 given is no count (nodes = 0).
int64_t optional_count(const TomlFields& t, std::string_view key, int64_t high) {
  if (!t.has(key)) return t.get_int_or(key, 0);
  const int64_t value = t.get_int(key);
  if (value < 1 || value > high) t.fail(key, fmt::format("{} is not in [1, {}]", value, high));
  return value;
}

double optional_figure(const TomlFields& t, std::string_view key, double low, double high) {
  if (!t.has(key)) return t.get_double_or(key, 0.0);
  const double value = t.get_double(key);
  if (!(value >= low && value <= high)) {
    t.fail(key, fmt::format("{} is not in [{:g}, {:g}]", value, low, high));
  }
  return value;
}

// A value sbatch takes as one option's argument, checked by slurm_job.h.
std::string sbatch_value(const TomlFields& t, std::string_view key) {
  const std::string value = t.get_string_or(key, "");
  if (!t.has(key)) return value;
  if (const std::string problem = sbatch_value_problem(value); !problem.empty()) {
    t.fail(key, problem);
  }
  return value;
}

SlurmPartition load_partition(const TomlFields& t, const std::string& name) {
  SlurmPartition p;
  p.name = name;
  p.slurm_partition = sbatch_value(t, "slurm_partition");
  p.gpu = t.get_name_or("gpu", "");
  p.gpus_per_node = optional_count(t, "gpus_per_node", kMaxGpusPerNode);
  if (!p.gpu.empty() && p.gpus_per_node == 0) t.fail("gpus_per_node", "missing for a GPU type");
  p.cpus_per_node = optional_count(t, "cpus_per_node", kMaxCpusPerNode);
  p.memory_per_node_bytes =
      optional_figure(t, "memory_per_node_gib", kMinHostMemoryGib, kMaxHostMemoryGib) * kGiB;
  p.nodes = optional_count(t, "nodes", kMaxNodes);
  // A minute to ~11 years: a 0 would read as no limit (leave the key out for that).
  p.max_time_s = optional_figure(t, "max_time_hours", 1.0 / 60.0, 1e5) * 3600.0;
  p.price_per_gpu_hour = non_negative(t, "price_per_gpu_hour");
  p.constraint = sbatch_value(t, "constraint");
  p.nodelist = sbatch_value(t, "nodelist");
  p.reservation = sbatch_value(t, "reservation");
  p.sbatch_lines = t.get_string_array_or("sbatch_lines");
  for (const std::string& line : p.sbatch_lines) {
    if (const std::string problem = sbatch_line_problem(line); !problem.empty()) {
      t.fail("sbatch_lines", problem);
    }
  }
  p.links = read_link_settings(t);
  t.check_all_used("docs/slurm.md");
  return p;
}

SlurmLauncherSettings load_launcher(const TomlFields& t) {
  SlurmLauncherSettings l;
  l.srun_mpi = t.get_string_or("srun_mpi", l.srun_mpi);
  if (l.srun_mpi.empty()) t.fail("srun_mpi", "empty (use \"pmix\", \"pmi2\" or \"none\")");
  l.srun_args = t.get_string_array_or("srun_args");
  l.setup = t.get_string_array_or("setup");
  l.gres_name = t.get_string_or("gres_name", l.gres_name);
  t.check_all_used("docs/slurm.md");
  return l;
}

}  // namespace

const SlurmPartition& SlurmCluster::partition(const std::string& name) const {
  const std::string& wanted = name.empty() ? default_partition : name;
  if (wanted.empty() && partitions.size() == 1) return partitions.front();
  std::vector<std::string> names;
  for (const SlurmPartition& p : partitions) {
    if (p.name == wanted) return p;
    names.push_back(p.name);
  }
  if (wanted.empty()) {
    throw InputError(fmt::format("{} has several partitions: choose one with --partition ({})",
                                 source,
                                 join_choices(names)));
  }
  throw InputError(fmt::format("unknown partition '{}' in {}; valid: {}",
                               wanted,
                               source.empty() ? "the cluster" : source,
                               names.empty() ? "none" : join_choices(names)));
}

SlurmCluster load_slurm_cluster(const std::string& path) {
  const std::shared_ptr<toml::table> document = parse_toml_document(path);
  const TomlFields root(*document, path, document);
  SlurmCluster c;
  c.source = path;
  c.name = root.get_name_or("name", "");
  c.inter_node_gb_per_s =
      optional_figure(root, "inter_node_gb_per_s", kMinInterNodeGbPerS, kMaxInterNodeGbPerS);
  c.account = root.get_name_or("account", "");  // a name, and one word for sbatch:
  c.qos = root.get_name_or("qos", "");
  sbatch_value(root, "account");
  sbatch_value(root, "qos");
  c.default_partition = root.get_name_or("default_partition", "");
  const TomlFields partitions = root.table("partitions");
  for (auto&& [name, value] : *(*document)["partitions"].as_table()) {
    if (const std::string problem = name_problem(name.str()); !problem.empty()) {
      partitions.fail(fmt::format("{}...", name.str().substr(0, 32)), problem);
    }
    c.partitions.push_back(load_partition(partitions.table(name.str()), std::string(name.str())));
  }
  if (c.partitions.empty()) root.fail("partitions", "no partition: add [partitions.NAME]");
  if (!c.default_partition.empty()) c.partition(c.default_partition);  // names one of them
  if (const auto launcher = root.table_or_none("launcher")) c.launcher = load_launcher(*launcher);
  root.check_all_used("docs/slurm.md");
  return c;
}

LinkSettings cluster_links(const std::string& cluster_file, const std::string& partition) {
  if (cluster_file.empty()) return {};
  return load_slurm_cluster(cluster_file).partition(partition).links;
}

PlannedHardware fill_from_partition(PlannedHardware h,
                                    const std::string& cluster_file,
                                    const std::string& partition) {
  const SlurmCluster cluster = load_slurm_cluster(cluster_file);
  const SlurmPartition& p = cluster.partition(partition);
  if (h.gpu.empty() && h.gpu_device) h.gpu = p.gpu;
  if (!h.gpus_per_node_given && p.gpus_per_node > 0) h.gpus_per_node = p.gpus_per_node;
  if (!h.inter_node_given && cluster.inter_node_gb_per_s > 0) {
    h.inter_node_gb_per_s = cluster.inter_node_gb_per_s;
  }
  if (h.host_memory_gib == 0 && p.memory_per_node_bytes > 0) {
    h.host_memory_gib = p.memory_per_node_bytes / kGiB;
  }
  h.links = h.links.over(p.links);
  if (h.cpu_cores_per_gpu == 0 && p.cpus_per_node > 0 && p.gpus_per_node > 0)
    h.cpu_cores_per_gpu = std::max<int64_t>(1, p.cpus_per_node / p.gpus_per_node);
  if (p.nodes > 0 && h.nodes > p.nodes) {
    throw InputError(fmt::format(
        "{} nodes asked, but partition '{}' of {} has {}", h.nodes, p.name, cluster_file, p.nodes));
  }
  if (p.gpus_per_node > 0 && h.gpus_per_node > p.gpus_per_node) {
    throw InputError(fmt::format("{} GPUs per node asked, but partition '{}' of {} has {}",
                                 h.gpus_per_node,
                                 p.name,
                                 cluster_file,
                                 p.gpus_per_node));
  }
  return h;
}

}  // namespace gpudays
