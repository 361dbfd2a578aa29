// The contract between a sweep and one trial process: the trial's specification (written by the
// sweep as a JSON file, read by `gpudays trial --spec FILE`) and its result (one JSON object, the
// last line of the trial's standard output). A trial that runs out of memory reports status "oom"
// and exits 0; a trial that prints no result is a crash.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/step_timing.h"
#include "plan/methods.h"
#include "results/trial_record.h"

namespace gpudays {

struct TrialSpec {
  std::string model;       // catalog name
  std::string model_file;  // or a model file
  std::string device = "cuda";  // "cuda" or "cpu"
  std::string gpu;              // catalog name of the device ("cpu" on the CPU)
  int64_t num_nodes = 1;
  int64_t gpus_per_node = 1;
  MethodSet methods;
  int64_t micro_batch_size = 1;
  int64_t grad_acc_steps = 1;
  int64_t warmup_steps = 1;
  int64_t timed_steps = 3;
  int64_t memory_limit_bytes = 0;  // 0: the device's memory
  StepTiming timing = StepTiming::kWhole;
  // Parts timing only: whole steps (with the real accumulation) to check the composition against;
  // 0: no check.
  int64_t check_steps = 0;
};

struct TrialResult {
  TrialStatus status = TrialStatus::kCrash;
  std::string message;
  int64_t steps_timed = 0;
  double step_time_median_s = 0.0;
  double step_time_min_s = 0.0;
  double step_time_max_s = 0.0;
  int64_t peak_memory_bytes = 0;
  // As TrialRecord's fields of the same names (results/trial_record.h).
  StepTiming timing = StepTiming::kWhole;
  double micro_step_time_s = 0.0;
  double last_micro_step_time_s = 0.0;
  double optimizer_time_s = 0.0;
  double check_step_time_s = 0.0;
  std::string timing_check;  // "", "agrees" or "disagrees"
  std::string device_name;
  std::string driver;
  std::string torch_version;
};

nlohmann::json to_json(const TrialSpec& spec);
TrialSpec trial_spec_from_json(const nlohmann::json& j);  // throws InputError
nlohmann::json to_json(const TrialResult& result);
// Parses the last non-empty line of a trial's output; throws InputError when there is none.
TrialResult parse_trial_output(const std::string& stdout_text);

}  // namespace gpudays
