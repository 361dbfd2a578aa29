// One benchmark trial as stored in the results database: what was run (model, hardware, method
// set, micro-batch), what happened (status, timings, memory, throughput, utilisation) and what
// produced it (software version and commit, torch version, device, driver, date, host).
#pragma once

#include <cstdint>
#include <string>

namespace gpudays {

enum class TrialStatus { kOk, kOutOfMemory, kCrash, kTimeout, kRejected };
std::string to_string(TrialStatus status);
TrialStatus parse_trial_status(const std::string& text);  // throws InputError

struct TrialRecord {
  // Identity: the configuration and the hardware it ran on.
  std::string model;
  std::string gpu;          // catalog name, or "cpu"
  std::string device_name;  // as the device reports it
  int64_t num_nodes = 1;
  int64_t gpus_per_node = 1;
  bool free_lunch = false;
  bool activation_checkpointing = false;
  std::string sharding = "none";
  bool offloading = false;
  int64_t micro_batch_size = 1;
  int64_t grad_acc_steps = 1;
  int64_t memory_limit_bytes = 0;  // 0: the device's own memory

  // Outcome.
  TrialStatus status = TrialStatus::kOk;
  std::string message;  // why it failed or was rejected
  int64_t steps_timed = 0;
  double step_time_median_s = 0.0;
  double step_time_min_s = 0.0;
  double step_time_max_s = 0.0;
  int64_t peak_memory_bytes = 0;
  double samples_per_s = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  double hfu = 0.0;
  double training_days = 0.0;
  double gpu_days = 0.0;
  double predicted_step_time_s = 0.0;
  int64_t predicted_memory_bytes = 0;

  // How the step time was measured (schema 2): "whole" optimizer steps, or "parts" composed as
  // (accumulation - 1) x micro_step_time_s + last_micro_step_time_s + optimizer_time_s (medians).
  // A parts trial that checked its composition against whole steps records their median in
  // check_step_time_s and timing_check "agrees" or "disagrees" (more than 5% apart); "" otherwise.
  std::string timing = "whole";
  double micro_step_time_s = 0.0;       // a micro-step without gradient communication
  double last_micro_step_time_s = 0.0;  // the last micro-step, with it
  double optimizer_time_s = 0.0;
  double check_step_time_s = 0.0;
  std::string timing_check;

  // Provenance.
  std::string gpudays_version;
  std::string git_commit;
  std::string torch_version;
  std::string driver;
  std::string hostname;
  std::string created_at;  // ISO 8601 UTC

  // The identity as one string: two trials with equal keys measure the same thing (the catalog
  // GPU, not the device's own name, identifies the hardware, so a rerun finds it before running).
  std::string key() const;
};

}  // namespace gpudays
