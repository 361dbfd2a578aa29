// Helpers of the Slurm tests (tests/slurm): an environment variable set for one scope, and, through
// a real controller (the CTest entry Slurm.Cluster sets SLURM_CONF), a submitted job's status as
// `gpudays jobs --format json` reports it, polled until a condition holds or the job leaves.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudays::test {

// Sets (or with nullptr unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline bool controller_given() {
  const char* conf = std::getenv("SLURM_CONF");
  return conf != nullptr && std::filesystem::exists(conf);
}

#define REQUIRE_CONTROLLER()                                     \
  if (!::gpudays::test::controller_given())                      \
  GTEST_SKIP() << "no Slurm controller (ctest -R Slurm.Cluster " \
                  "starts one)"

// The job id of "Submitted Slurm job N" in a submitting command's output ("" and a failure if
// it did not submit).
inline std::string submitted_job_id(const CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex("Submitted Slurm job ([0-9]+)"))) {
    ADD_FAILURE() << r.out << r.err;
    return "";
  }
  return m[1];
}

// The job as `gpudays jobs --format json` reports it.
inline nlohmann::json job_status(const std::string& id, const std::string& dir) {
  const auto r = run_gpudays("jobs --format json --slurm-dir " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json listed = nlohmann::json::parse(r.out);
  for (const auto& j : listed.at("jobs")) {
    if (j.at("job_id") == id) return j;
  }
  ADD_FAILURE() << "job " << id << " not listed";
  return {};
}

inline bool still_queued(const nlohmann::json& job) {
  const std::string state = job.value("state", "");
  return state == "PENDING" || state == "RUNNING" || state == "COMPLETING" ||
         state == "CONFIGURING";
}

// Polls until `done(job)` or the job leaves the queue; returns the last status.
inline nlohmann::json wait_for(const std::string& id,
                               const std::string& dir,
                               const std::function<bool(const nlohmann::json&)>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(12);
  nlohmann::json job = job_status(id, dir);
  while (still_queued(job) && !done(job) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    job = job_status(id, dir);
  }
  return job;
}

inline nlohmann::json wait_until_finished(const std::string& id, const std::string& dir) {
  return wait_for(id, dir, [](const nlohmann::json&) { return false; });
}

}  // namespace gpudays::test
