// JSON forms of TrialSpec and TrialMeasurement.
#include "sweep/trial_spec.h"

#include <cstdint>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_errors.h"
#include "common/json_fields.h"
#include "common/output_files.h"
#include "search_space/method_fields.h"

namespace gpudays {
namespace {

// The largest micro-batch x accumulation a spec may ask for: the catalog's largest global batch
// (model_validate.cpp), so that the runner's product with the ranks cannot overflow.
constexpr int64_t kMaxRankSamplesPerStep = int64_t{1} << 30;
constexpr int64_t kMaxSteps = int64_t{1} << 20;  // per kind of step; a trial times a handful

void check_range(const char* key, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) {
    throw InputError(fmt::format(
        "bad trial specification: {} must be in [{}, {}], is {}", key, low, high, value));
  }
}

// What the trial runner relies on: sizes >= 1 whose product stays exact, bounded step counts.
void check_spec(const TrialSpec& s) {
  check_range("micro_batch_size", s.config.micro_batch_size, 1, kMaxRankSamplesPerStep);
  check_range("grad_acc_steps", s.config.grad_acc_steps, 1, kMaxRankSamplesPerStep);
  if (s.config.micro_batch_size > kMaxRankSamplesPerStep / s.config.grad_acc_steps) {
    throw InputError(
        fmt::format("bad trial specification: micro_batch_size {} x grad_acc_steps {} "
                    "exceeds {} samples per rank and step",
                    s.config.micro_batch_size,
                    s.config.grad_acc_steps,
                    kMaxRankSamplesPerStep));
  }
  check_range("warmup_steps", s.warmup_steps, 0, kMaxSteps);
  check_range("timed_steps", s.timed_steps, 1, kMaxSteps);
  check_range("check_steps", s.check_steps, 0, kMaxSteps);
  check_range("memory_limit_bytes", s.memory_limit_bytes, 0, INT64_MAX);
  if (!s.profile_path.empty()) {  // refused before the trial runs, not after
    check_output_file(s.profile_path, "bad trial specification: profile");
    const std::filesystem::path folder = std::filesystem::path(s.profile_path).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
      throw InputError(fmt::format(
          "bad trial specification: profile {}: no folder {}", s.profile_path, folder.string()));
    }
  }
}

// Each method field under its name: a flag as a JSON bool, a choice as its name.
void write_methods(nlohmann::json& j, const MethodSet& m) {
  for (const MethodField& f : method_fields()) {
    j[std::string(f.name)] =
        f.kind() == MethodKind::kFlag ? nlohmann::json(f.flag(m)) : nlohmann::json(f.text(m));
  }
}

void read_methods(const nlohmann::json& j, MethodSet& m) {
  for (const MethodField& f : method_fields()) {
    const nlohmann::json& value = j.at(std::string(f.name));
    if (f.kind() == MethodKind::kFlag) {
      f.set_flag(m, value.get<bool>());
    } else {
      f.set_text(m, value.get<std::string>());
    }
  }
}

}  // namespace

nlohmann::json to_json(const TrialSpec& s) {
  nlohmann::json j = {{"model", s.model},
                      {"model_file", s.model_file},
                      {"device", s.device},
                      {"micro_batch_size", s.config.micro_batch_size},
                      {"grad_acc_steps", s.config.grad_acc_steps},
                      {"warmup_steps", s.warmup_steps},
                      {"timed_steps", s.timed_steps},
                      {"memory_limit_bytes", s.memory_limit_bytes},
                      {"timing", to_string(s.timing)},
                      {"check_steps", s.check_steps}};
  if (!s.profile_path.empty()) j["profile"] = s.profile_path;
  write_methods(j, s.config.methods);
  return j;
}

namespace {

// An integer field of a specification: a JSON integer that fits int64_t (a float such as 4.9e19,
// or an unsigned value above 2^63 - 1, is refused rather than converted, which is undefined).
int64_t integer_field(const nlohmann::json& j, const char* key, std::optional<int64_t> fallback) {
  return json_int64_field(j, key, fallback, "bad trial specification");
}

}  // namespace

TrialSpec trial_spec_from_json(const nlohmann::json& j) {
  try {
    TrialSpec s;
    s.model = j.at("model").get<std::string>();
    s.model_file = j.value("model_file", "");
    s.device = j.at("device").get<std::string>();
    read_methods(j, s.config.methods);
    s.config.micro_batch_size = integer_field(j, "micro_batch_size", std::nullopt);
    s.config.grad_acc_steps = integer_field(j, "grad_acc_steps", std::nullopt);
    s.warmup_steps = integer_field(j, "warmup_steps", 1);
    s.timed_steps = integer_field(j, "timed_steps", 3);
    s.memory_limit_bytes = integer_field(j, "memory_limit_bytes", 0);
    s.timing = parse_step_timing(j.value("timing", "whole"));
    s.check_steps = integer_field(j, "check_steps", 0);
    s.profile_path = j.value("profile", "");
    check_spec(s);
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("bad trial specification: it {}", json_problem(e)));
  }
}

nlohmann::json to_json(const TrialMeasurement& r) {
  return {{"status", to_string(r.status)},
          {"message", r.message},
          {"steps_timed", r.steps_timed},
          {"step_time_median_s", r.step_time_median_s},
          {"step_time_min_s", r.step_time_min_s},
          {"step_time_max_s", r.step_time_max_s},
          {"peak_memory_bytes", r.peak_memory_bytes},
          {"timing", to_string(r.timing)},
          {"micro_step_time_s", r.micro_step_time_s},
          {"last_micro_step_time_s", r.last_micro_step_time_s},
          {"optimizer_time_s", r.optimizer_time_s},
          {"check_step_time_s", r.check_step_time_s},
          {"timing_check", r.timing_check},
          {"peak_reserved_bytes", r.peak_reserved_bytes},
          {"cuda_graph", r.cuda_graph},
          {"scan", r.scan},
          {"device_name", r.device_name},
          {"driver", r.driver},
          {"torch_version", r.torch_version}};
}

TrialMeasurement parse_trial_output(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) throw InputError("the trial printed no result");
  const size_t begin = text.rfind('\n', end);
  const std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1,
                                       end - (begin == std::string::npos ? 0 : begin + 1) + 1);
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    TrialMeasurement r;
    r.status = parse_trial_status(j.at("status").get<std::string>());
    r.message = j.value("message", "");
    r.steps_timed = json_int64_field(j, "steps_timed", 0, "the trial's result");
    r.step_time_median_s = j.value("step_time_median_s", 0.0);
    r.step_time_min_s = j.value("step_time_min_s", 0.0);
    r.step_time_max_s = j.value("step_time_max_s", 0.0);
    r.peak_memory_bytes = json_int64_field(j, "peak_memory_bytes", 0, "the trial's result");
    r.timing = parse_step_timing(j.value("timing", "whole"));
    r.micro_step_time_s = j.value("micro_step_time_s", 0.0);
    r.last_micro_step_time_s = j.value("last_micro_step_time_s", 0.0);
    r.optimizer_time_s = j.value("optimizer_time_s", 0.0);
    r.check_step_time_s = j.value("check_step_time_s", 0.0);
    r.timing_check = j.value("timing_check", "");
    r.peak_reserved_bytes = json_int64_field(j, "peak_reserved_bytes", 0, "the trial's result");
    r.cuda_graph = j.value("cuda_graph", "");
    r.scan = j.value("scan", "");
    r.device_name = j.value("device_name", "");
    r.driver = j.value("driver", "");
    r.torch_version = j.value("torch_version", "");
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("the trial's result {}", json_problem(e)));
  }
}

}  // namespace gpudays
