// One run per run directory (`train --out`): a directory that holds a run is continued only with
// --resume, and one process at a time trains into it, holding OUT/.gpudays-train.lock (an flock,
// released when the process ends however it ends) with its PID and host inside.
#pragma once

#include <string>

namespace gpudays {

class RunDirectoryClaim {
 public:
  // Throws InputError when `out` holds a run (metrics.jsonl or a checkpoint) and `resume` is
  // false, or when another process holds its lock (naming its PID and host).
  RunDirectoryClaim(const std::string& out, bool resume);
  ~RunDirectoryClaim();
  RunDirectoryClaim(const RunDirectoryClaim&) = delete;
  RunDirectoryClaim& operator=(const RunDirectoryClaim&) = delete;

 private:
  int fd_ = -1;
};

// What `out` holds of an earlier run, for the refusal ("metrics.jsonl, checkpoints to step-40");
// empty when nothing.
std::string earlier_run(const std::string& out);

}  // namespace gpudays
