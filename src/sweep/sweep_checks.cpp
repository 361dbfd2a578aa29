// What a sweep checks before any trial runs (sweep/sweep.h): the trial stderr folder and the
// device.
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "common/child_process.h"
#include "common/error.h"
#include "distributed/launcher.h"
#include "sweep/sweep.h"

namespace gpudays {

// --trial-stderr (or $GPUDAYS_TRIAL_STDERR_DIR): a folder that exists or can be made, before any
// trial runs.
void check_stderr_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw InputError(fmt::format("--trial-stderr {}: not a folder that can be made ({})",
                                 dir,
                                 ec ? ec.message() : "a file is in the way"));
  }
}

// Before any trial: can this build and machine run trials on the device? (No CUDA build or no GPU
// visible: the trial's one-line error, and nothing recorded.)
void check_trial_device(const std::string& device) {
  const ChildResult child =
      run_child({self_path(), "trial", "--check-device", device}, ChildOptions{120.0, ""});
  if (child.exit_code == 0 && !child.signaled && !child.timed_out) return;
  std::string error = error_line(child.err);
  for (const char* prefix : {"gpudays: ", "error: "}) {
    if (error.rfind(prefix, 0) == 0) error = error.substr(std::string(prefix).size());
  }
  throw EnvironmentError(fmt::format(
      "cannot run trials on {}: {}", device, error.empty() ? "the device check failed" : error));
}

}  // namespace gpudays
