// Error types shared by every component. InputError means the user's request or data is wrong
// (the command line turns it into a one-line message and exit code 2); anything else is a bug
// or an environment failure (exit code 1).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gpudays {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The environment failed, not the request and not gpudays: a disk full, a tool that crashed. The
// command line prints its one-line message with exit code 1 (not as an internal error).
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An exception's message as one line: the first line of what(), without the backtrace c10's
// errors append ("Exception raised from ...", "frame #N: ...").
std::string one_line(const std::exception& e);

// "a, b or c" — used by look-ups that fail, to name the valid choices.
std::string join_choices(const std::vector<std::string>& choices);

}  // namespace gpudays
