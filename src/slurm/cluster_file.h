// A Slurm cluster described by its user (`--cluster cluster.toml`, docs/slurm.md): its partitions
// (GPU type and count, CPUs and host memory per node, time limit), the network between nodes, the
// account/QOS defaults and the launcher's settings. Loading checks every key; the planner, `cost`
// and the sbatch generator read it. The same Partition also describes what `sinfo` reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"

namespace gpudays {

struct SlurmPartition {
  std::string name;                    // the table's name: what --partition selects
  std::string slurm_partition;         // the partition sbatch gets; "": `name`
  std::string gpu;                     // catalog GPU name ("" for a CPU-only partition)
  int64_t gpus_per_node = 0;           // GPUs (GRES gpu) per node
  int64_t cpus_per_node = 0;           // 0: unknown
  double memory_per_node_bytes = 0.0;  // host memory; 0: unknown
  int64_t nodes = 0;                   // nodes in the partition; 0: unknown
  double max_time_s = 0.0;             // the partition's time limit; 0: none
  double price_per_gpu_hour = 0.0;     // what the allocation is charged, if it is; 0: unknown
  // Where its jobs run, each "" when not given: sbatch --constraint (node features; how sites
  // with several GPU types in one partition select one), --nodelist and --reservation.
  std::string constraint;
  std::string nodelist;
  std::string reservation;
  std::vector<std::string> sbatch_lines;  // more #SBATCH options, e.g. "--exclusive"
  LinkSettings links;                     // its nodes' links where the GPU file's do not hold
  // The partition's name as sbatch takes it.
  const std::string& sbatch_name() const {
    return slurm_partition.empty() ? name : slurm_partition;
  }
  bool operator==(const SlurmPartition&) const = default;
};

// How ranks start inside an allocation and what the job script sets up first.
struct SlurmLauncherSettings {
  std::string srun_mpi = "pmix";       // srun --mpi=...: how MPI (and NCCL's bootstrap) wire up
  std::vector<std::string> srun_args;  // extra srun arguments
  std::vector<std::string> setup;      // shell lines before the job's command (module load ...)
  std::string gres_name = "gpu";       // --gres=gpu:N or the site's GRES name
  bool operator==(const SlurmLauncherSettings&) const = default;
};

struct SlurmCluster {
  std::string name;
  std::string source;                // the file it came from
  double inter_node_gb_per_s = 0.0;  // per node and direction; 0: unknown
  std::string account;               // sbatch --account default ("" none)
  std::string qos;                   // sbatch --qos default ("" none)
  std::string default_partition;     // "": the only partition
  std::vector<SlurmPartition> partitions;
  SlurmLauncherSettings launcher;

  // The partition named `name` ("": the default one, or the only one); InputError naming the valid
  // ones otherwise.
  const SlurmPartition& partition(const std::string& name) const;
};

// Throws InputError naming the file and key of anything malformed, missing or unknown.
SlurmCluster load_slurm_cluster(const std::string& path);

// The links of partition `partition` ("": the default one) of `cluster_file`; unset without a file.
LinkSettings cluster_links(const std::string& cluster_file, const std::string& partition);

// The hardware a plan runs on, as asked; fill_from_partition completes it from a partition.
struct PlannedHardware {
  std::string gpu;  // "" on a GPU device: the partition's
  bool gpu_device = true;
  int64_t nodes = 1;
  int64_t gpus_per_node = 1;
  bool gpus_per_node_given = false;
  double inter_node_gb_per_s = 12.5;
  bool inter_node_given = false;
  double host_memory_gib = 0.0;  // 0: the partition's memory, else the planner's default
  LinkSettings links;            // the command line's; unset ones: the partition's
  // Host cores per GPU for the input pipeline; 0 (unset): the partition's CPUs per node over its
  // GPUs per node, else the planner's assumption.
  int64_t cpu_cores_per_gpu = 0;
};

// The partition's GPU, GPUs per node, network, host memory and links where the request left them
// out; throws InputError when it asks for more nodes or GPUs per node than the partition has.
PlannedHardware fill_from_partition(PlannedHardware hardware,
                                    const std::string& cluster_file,
                                    const std::string& partition);

}  // namespace gpudays
