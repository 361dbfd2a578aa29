// TrialRecord identity, status and timing names, the fastest trial.
#include "results/trial_record.h"

#include <fmt/format.h>

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

std::string to_string(StepTiming timing) {
  return timing == StepTiming::kWhole ? "whole" : "parts";
}

StepTiming parse_step_timing(const std::string& text) {
  if (text == "whole") return StepTiming::kWhole;
  if (text == "parts") return StepTiming::kParts;
  throw InputError(fmt::format("unknown step timing '{}' (whole or parts)", text));
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
                     memory_limit_bytes);
}

std::string describe(const TrialRecord& t) {
  return fmt::format(
      "{} on {} x {}, {}", t.model, t.cluster.world_size(), t.gpu, describe(t.config));
}

const TrialRecord* fastest_ok(const std::vector<TrialRecord>& trials) {
  const TrialRecord* best = nullptr;
  for (const TrialRecord& t : trials) {
    if (t.ok() && (best == nullptr || t.step_time_s() < best->step_time_s())) best = &t;
  }
  return best;
}

}  // namespace gpudays
