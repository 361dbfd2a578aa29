// The transformers major version an HF export targets.
#include "exports/transformers_version.h"

#include <cctype>
#include <exception>

#include <fmt/format.h>

#include "common/child_process.h"
#include "common/error.h"

namespace gpudays {
namespace {

// The leading number of "4.47.1" (or "5"); none when the text does not start with digits.
std::optional<int> leading_major(const std::string& version) {
  size_t digits = 0;
  while (digits < version.size() && digits < 3 &&
         std::isdigit(static_cast<unsigned char>(version[digits])))
    ++digits;
  if (digits == 0) return std::nullopt;
  if (digits < version.size() && version[digits] != '.') return std::nullopt;
  return std::stoi(version.substr(0, digits));
}

}  // namespace

int parse_transformers_major(const std::string& text) {
  const std::optional<int> major = leading_major(text);
  if (!major || (*major != 4 && *major != 5)) {
    throw InputError(
        fmt::format("--transformers {}: expected 4 or 5 (the major version of transformers the "
                    "TrainingArguments are for)",
                    text));
  }
  return *major;
}

std::optional<std::string> installed_transformers_version(const std::string& python) {
  const std::vector<std::string> argv = {
      python, "-c", "import importlib.metadata as m; print(m.version('transformers'))"};
  try {
    const ChildResult done = run_child(argv, ChildOptions{.time_limit_s = 10.0});
    if (done.timed_out || done.signaled || done.exit_code != 0) return std::nullopt;
    const std::string version = last_line(done.out);
    if (version.empty() || version.size() > 64) return std::nullopt;
    return version;
  } catch (const std::exception&) {
    return std::nullopt;  // no python3, or nowhere to put its output: the default
  }
}

TransformersTarget choose_transformers(const std::string& flag, const std::string& python) {
  if (!flag.empty()) return {parse_transformers_major(flag), "--transformers"};
  const std::optional<std::string> installed = installed_transformers_version(python);
  if (!installed) {
    return {5, fmt::format("no transformers found by {}; --transformers 4 for 4.x", python)};
  }
  const std::optional<int> major = leading_major(*installed);
  if (major && (*major == 4 || *major == 5)) {
    return {*major, fmt::format("transformers {} in {}", *installed, python)};
  }
  return {5, fmt::format("transformers {} in {} is neither 4 nor 5", *installed, python)};
}

}  // namespace gpudays
