// TrialRecord identity, status and timing names, the fastest trial.
#include "results/trial_record.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "search_space/method_fields.h"

namespace gpudays {

std::string to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::kOk:
      return "ok";
    case TrialStatus::kOutOfMemory:
      return "oom";
    case TrialStatus::kCrash:
      return "crash";
    case TrialStatus::kTimeout:
      return "timeout";
    case TrialStatus::kRejected:
      return "rejected";
    case TrialStatus::kKilled:
      return "killed";
  }
  return "?";
}

TrialStatus parse_trial_status(const std::string& text) {
  for (TrialStatus s : {TrialStatus::kOk,
                        TrialStatus::kOutOfMemory,
                        TrialStatus::kCrash,
                        TrialStatus::kTimeout,
                        TrialStatus::kRejected,
                        TrialStatus::kKilled}) {
    if (to_string(s) == text) return s;
  }
  throw InputError(fmt::format("unknown trial status '{}'", text));
}

namespace {

constexpr EnumName<StepTiming> kTimingNames[] = {{StepTiming::kWhole, "whole"},
                                                 {StepTiming::kParts, "parts"},
                                                 {StepTiming::kReference, "reference"}};
constexpr EnumName<MeasurementRule> kRuleNames[] = {{MeasurementRule::kGpudays, "gpudays"},
                                                    {MeasurementRule::kReference, "reference"}};

}  // namespace

std::string to_string(StepTiming timing) {
  return enum_name<StepTiming>(kTimingNames, timing);
}

StepTiming parse_step_timing(const std::string& text) {
  return parse_enum<StepTiming>(kTimingNames, text, "step timing");
}

std::string to_string(MeasurementRule rule) {
  return enum_name<MeasurementRule>(kRuleNames, rule);
}

MeasurementRule parse_measurement_rule(const std::string& text) {
  return parse_enum<MeasurementRule>(kRuleNames, text, "measurement rule");
}

namespace {

// "fl=1|ckpt=0|zero_2|offload=0": each method field as its tag and 0 / 1, a choice as its name.
// Fields newer than the results' first schema only when not default (stored keys stay valid).
std::string methods_key(const MethodSet& m) {
  std::string out;
  for (const MethodField& f : method_fields()) {
    if (f.results_since > 1 && f.is_default(m)) continue;
    const std::string value = f.kind() == MethodKind::kFlag ? (f.flag(m) ? "1" : "0") : f.text(m);
    out += (out.empty() ? "" : "|") +
           (f.key_tag.empty() ? value : fmt::format("{}={}", f.key_tag, value));
  }
  return out;
}

}  // namespace

// The format is stored in every database's key column: changing it orphans stored trials. Schema
// 5 put the model's digest where its name was (results_db.cpp re-keys older rows).
std::string TrialRecord::key() const {
  return fmt::format("{}|{}|{}x{}|{}|mb={}|acc={}|mem={}",
                     model_digest,
                     gpu,
                     cluster.num_nodes,
                     cluster.gpus_per_node,
                     methods_key(config.methods),
                     config.micro_batch_size,
                     config.grad_acc_steps,
                     memory_limit_bytes) +
         (rule == MeasurementRule::kGpudays ? "" : "|rule=" + to_string(rule));
}

std::string describe(const TrialRecord& t) {
  return fmt::format(
      "{} on {} x {}, {}", t.model, t.cluster.world_size(), t.gpu, describe(t.config));
}

namespace {

// Whether `b` is a larger micro-batch of `a`'s method set and cell that also succeeded.
bool larger_success(const TrialRecord& a, const TrialRecord& b) {
  return b.ok() && b.rule == a.rule && b.model_digest == a.model_digest && b.gpu == a.gpu &&
         b.cluster == a.cluster && b.memory_limit_bytes == a.memory_limit_bytes &&
         b.config.methods == a.config.methods &&
         b.config.micro_batch_size > a.config.micro_batch_size;
}

// A successful reference-rule trial that is not its method set's pick.
bool passed_over(const TrialRecord& t, const std::vector<TrialRecord>& trials) {
  return t.ok() && t.rule == MeasurementRule::kReference &&
         std::any_of(trials.begin(), trials.end(), [&](const TrialRecord& b) {
           return larger_success(t, b);
         });
}

}  // namespace

std::vector<TrialRecord> reference_picks(const std::vector<TrialRecord>& trials) {
  std::vector<TrialRecord> kept;
  for (const TrialRecord& t : trials) {
    if (!passed_over(t, trials)) kept.push_back(t);
  }
  return kept;
}

const TrialRecord* fastest_ok(const std::vector<TrialRecord>& trials) {
  const TrialRecord* best = nullptr;
  for (const TrialRecord& t : trials) {
    if (!t.ok() || (best != nullptr && t.step_time_s() >= best->step_time_s())) continue;
    if (!passed_over(t, trials)) best = &t;
  }
  return best;
}

}  // namespace gpudays
