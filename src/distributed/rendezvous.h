// Where the ranks of one launch find each other, read from the environment the launcher left:
// torchrun's (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), Open MPI's
// (OMPI_COMM_WORLD_*), MPICH's and PMIx's, and Slurm's (SLURM_PROCID, SLURM_STEP_NUM_TASKS,
// SLURM_LOCALID, the first host of the step's node list). Torch-free: the c10d store it names is
// opened by distributed/world.h; the trainer and the Slurm launcher call this to know their place.
#pragma once

#include <string>

namespace gpudays {

// This process's place in its launch.
struct RankEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // among the ranks of this node (0 when the launcher does not say)
  bool operator==(const RankEnvironment&) const = default;
};

// The key-value store the ranks meet at: a TCP store on `host`:`port`, served by rank 0 (or by
// torchrun's agent, which already serves one), or a file store at `file` on a path every rank sees.
struct StoreAddress {
  std::string host;
  int port = 0;
  std::string file;                 // non-empty: a file store instead of a TCP one
  bool served_by_launcher = false;  // torchrun's agent serves the TCP store: rank 0 connects too
  std::string key_prefix;           // keeps this launch's keys apart (torchrun's restarts)
  bool operator==(const StoreAddress&) const = default;
};

struct Rendezvous {
  std::string launcher = "none";  // torchrun, openmpi, mpich, pmix, slurm or none
  RankEnvironment ranks;
  StoreAddress store;  // empty for one rank
  bool operator==(const Rendezvous&) const = default;
};

// The rendezvous of this process from its environment. The first launcher whose size variable is
// set gives the ranks (torchrun, Open MPI, MPICH, PMIx, Slurm); the store is, in this order:
// GPUDAYS_STORE_FILE (a file store on a shared path); MASTER_ADDR and MASTER_PORT; under Slurm
// the first host of SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST) and port
// 20000 + SLURM_JOB_ID % 20000; under an MPI launcher whose ranks all run on this node, a file
// store under /tmp named by the job. Nothing set: one rank, no store. Throws InputError, in one
// line, for inconsistent variables: a count or rank that is not a number, a rank outside the
// world, a size without a rank, MASTER_ADDR without MASTER_PORT, a port out of range, several
// nodes with no store address.
Rendezvous rendezvous_from_environment();

// This process's ranks only (no store needed): rendezvous_from_environment().ranks, without the
// store's checks.
RankEnvironment rank_environment();
// Shorthands: started with more than one rank; this process's rank on its node.
bool launched_with_several_ranks();
int local_rank();

// The first host of a Slurm node list: "gpu[03-05,09],cpu1" -> "gpu03". Throws InputError for
// an empty or malformed list.
std::string first_slurm_host(const std::string& nodelist);

}  // namespace gpudays
