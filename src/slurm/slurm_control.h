// Talking to the Slurm controller through its commands (sinfo, sbatch, squeue, scontrol,
// scancel), each run as a child process: is Slurm there, which partitions it has, submitting a
// script, a job's state, cancelling. A missing command or an unreachable controller is an
// InputError (exit 2: nothing was submitted).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "slurm/cluster_file.h"

namespace gpudays {

// Throws InputError when sbatch is not on PATH or `scontrol ping` finds no controller.
void check_slurm_reachable();

// The partitions `sinfo` reports (GPUs from GRES "gpu[:type]:N", memory, CPUs, time limit, nodes).
std::vector<SlurmPartition> query_partitions();
// Parses `sinfo -h -o '%R|%c|%m|%G|%l|%D'`; exposed for tests.
std::vector<SlurmPartition> parse_sinfo_partitions(const std::string& text);

// Writes nothing: submits `script_path` with `sbatch --parsable`; returns the job id. Throws
// EnvironmentError with sbatch's message when it refuses.
std::string submit_sbatch(const std::string& script_path);

// Job id -> state (PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, ...) for the jobs the
// controller still knows (squeue, then scontrol for finished ones); others are absent.
std::map<std::string, std::string> query_job_states(const std::vector<std::string>& job_ids);

// scancel ID; throws EnvironmentError with scancel's message when it fails.
void cancel_job(const std::string& job_id);

}  // namespace gpudays
