// Which major version of transformers an HF export targets (export_hf.cpp writes each one's field
// names): the --transformers flag, else the version python3 on PATH has installed, else 5.
#pragma once

#include <optional>
#include <string>

namespace gpudays {

struct TransformersTarget {
  int major = 5;      // 4 (FSDP1, gradient_checkpointing, the fsdp option string) or 5
  std::string basis;  // how it was chosen, for the user: "--transformers", "5.24.0 in python3"
};

// "4" or "5" (also "4.47.1"-style versions by their major); throws InputError otherwise.
int parse_transformers_major(const std::string& text);

// The installed transformers' version as `python` reports it (importlib.metadata, without
// importing transformers; 10 s at most); none when python or the package is missing.
std::optional<std::string> installed_transformers_version(const std::string& python);

// The flag's major when given, else the installed one's where it is 4 or 5, else 5.
TransformersTarget choose_transformers(const std::string& flag, const std::string& python);

}  // namespace gpudays
