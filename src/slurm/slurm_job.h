// One Slurm job, generically: a command line run with N nodes x tasks per node, either by srun on
// every task (a training run) or once in the batch shell, which starts its own job steps with srun
// (the benchmark's sweep, one step per trial). Renders the readable sbatch script; the srun line is
// the launcher's (distributed/launcher.h). Torch-free; `bench --slurm` and `train --slurm` build
// one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpudays {

// Where the job's command runs: on every task under srun, or once in the batch shell.
enum class JobLaunch { kEveryTask, kBatchShell };

struct SlurmJob {
  std::string name = "gpudays";  // --job-name
  std::string description;       // a comment line in the script
  std::string partition;         // "" : the cluster's default
  std::string account;
  std::string qos;
  std::string reservation;  // "": none
  std::string constraint;   // node features, e.g. the GPU type's; "": none
  std::string nodelist;     // "": any nodes of the partition
  int64_t nodes = 1;
  int64_t tasks_per_node = 1;
  int64_t gpus_per_node = 0;  // --gres=<gres_name>:N; 0: none
  std::string gres_name = "gpu";
  int64_t cpus_per_task = 1;
  double memory_per_node_bytes = 0.0;  // --mem; 0: the partition's default
  double time_limit_s = 0.0;           // --time; 0: the partition's default
  // --signal=TERM@N: SIGTERM to every job step N s before the time limit, so that a training run
  // checkpoints while it still may; 0: none (the limit's SIGTERM, then SIGKILL after KillWait).
  int64_t term_before_limit_s = 0;
  std::string log_dir;                    // --output=<log_dir>/%x-%j.out (absolute)
  std::vector<std::string> sbatch_lines;  // more #SBATCH options, after gpudays' own
  std::vector<std::string> setup;         // shell lines run first (module load, a venv)
  std::vector<std::pair<std::string, std::string>> environment;  // exported before the command
  // Exported only where the job's environment leaves them unset: the user's value wins
  // (NCCL_P2P_DISABLE for GPUs without peer-to-peer).
  std::vector<std::pair<std::string, std::string>> environment_defaults;
  JobLaunch launch = JobLaunch::kEveryTask;
  std::string srun_mpi = "pmix";
  std::vector<std::string> srun_args;
  std::vector<std::string> command;
};

// The sbatch script: #SBATCH lines, `set -euo pipefail`, the setup, the environment, the command.
// Throws InputError for a job that cannot be written (no command, a count below 1, a value below).
std::string render_sbatch_script(const SlurmJob& job);

// What is wrong with an option's argument (--constraint, --nodelist, --reservation, a partition):
// empty, or whitespace or a control character in it; "" when nothing is. The caller names the
// file and key, or the flag.
std::string sbatch_value_problem(const std::string& value);
// What is wrong with a further #SBATCH line: a newline or other control character, not a long
// option ("--exclusive", "--mail-type=END"), or an option gpudays writes itself (its own key or
// flag says where to set it); "" when nothing is.
std::string sbatch_line_problem(const std::string& line);

// Slurm's time formats: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S" and "infinite"/"UNLIMITED"
// (0). Throws InputError naming `text`.
double parse_slurm_time_s(const std::string& text);
// Seconds as D-HH:MM:SS (rounded up to the minute, so a limit is never shortened).
std::string format_slurm_time(double seconds);

// One argument quoted for a POSIX shell when it needs it.
std::string shell_quote(const std::string& arg);

}  // namespace gpudays
