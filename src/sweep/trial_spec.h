// The contract between a sweep and one trial process: the trial's specification (written by the
// sweep as a JSON file, read by `gpudays trial --spec FILE`) and its result (one JSON object, the
// last line of the trial's standard output). A trial that runs out of memory reports status "oom"
// and exits 0; a trial that prints no result is a crash.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "results/trial_record.h"
#include "search_space/methods.h"
#include "sweep/step_timing.h"

namespace gpudays {

struct TrialSpec {
  std::string model;            // catalog name
  std::string model_file;       // or a model file
  std::string device = "cuda";  // "cuda" or "cpu"; the ranks are the launcher's
  Configuration config;
  int64_t warmup_steps = 1;
  int64_t timed_steps = 3;
  int64_t memory_limit_bytes = 0;  // 0: the device's memory
  StepTiming timing = StepTiming::kWhole;
  // Parts timing only: whole steps (with the real accumulation) to check the composition against;
  // 0: no check.
  int64_t check_steps = 0;
  // "": none; else where the timed steps' profile goes (trial/kernel_profile.h: a Chrome trace
  // there, its per-kernel summary at PATH.kernels.tsv). Each timing pass writes it; the last stays.
  std::string profile_path;
};

nlohmann::json to_json(const TrialSpec& spec);
TrialSpec trial_spec_from_json(const nlohmann::json& j);  // throws InputError
nlohmann::json to_json(const TrialMeasurement& measured);
// Parses the last non-empty line of a trial's output; throws InputError when there is none.
TrialMeasurement parse_trial_output(const std::string& stdout_text);

}  // namespace gpudays
