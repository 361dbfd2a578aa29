// Running gnuplot as a child process: find it on PATH (or at an explicit path), run one generated
// script in the output directory with its output captured to a log, and fail with a one-line
// message (install hint, or gnuplot's first error) instead of a half-written report.
#pragma once

#include <string>

namespace gpudays {

struct GnuplotOptions {
  std::string executable = "gnuplot";  // a name looked up on PATH, or a path
  double timeout_s = 120.0;
};

// The full (absolute) path of the executable, or an empty string when it is not found.
std::string find_executable(const std::string& name_or_path);

// Throws InputError when gnuplot is missing (naming how to install it).
std::string require_gnuplot(const GnuplotOptions& options);

// Runs `gnuplot script_name` with `work_dir` as the working directory; stdout and stderr go to
// `log_name` there. Throws EnvironmentError with the first error line when gnuplot fails or runs
// past the time limit, Interrupted on SIGINT/SIGTERM (within an InterruptScope; gnuplot is
// killed).
void run_gnuplot(const std::string& script_name,
                 const std::string& log_name,
                 const std::string& work_dir,
                 const GnuplotOptions& options);

}  // namespace gpudays
