// Helpers of the `gpudays train` command-line tests: running a shell command with one thread per
// process (runs compared step by step need the same thread count) and reading OUT/metrics.jsonl.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/child_process.h"

namespace gpudays::test {

inline ChildResult sh(const std::string& command) {
  return run_child({"/bin/sh", "-c", "export OMP_NUM_THREADS=1; " + command},
                   ChildOptions{600.0, ""});
}

// step -> its metrics line of DIR/metrics.jsonl (each step once).
inline std::map<int64_t, nlohmann::json> read_metrics(const std::filesystem::path& out_dir) {
  std::map<int64_t, nlohmann::json> by_step;
  std::ifstream in(out_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(by_step.count(j.at("step").get<int64_t>()), 0u) << "step logged twice: " << line;
    by_step[j.at("step").get<int64_t>()] = j;
  }
  return by_step;
}

// The losses of two runs, step by step: equal bit for bit (tolerance 0) or within `tolerance`.
inline void expect_same_losses(const std::map<int64_t, nlohmann::json>& a,
                               const std::map<int64_t, nlohmann::json>& b,
                               double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [step, j] : a) {
    ASSERT_EQ(b.count(step), 1u) << step;
    if (tolerance == 0.0) {
      EXPECT_EQ(j.at("loss").get<double>(), b.at(step).at("loss").get<double>()) << "step " << step;
    } else {
      EXPECT_NEAR(j.at("loss").get<double>(), b.at(step).at("loss").get<double>(), tolerance)
          << "step " << step;
    }
  }
}

}  // namespace gpudays::test
