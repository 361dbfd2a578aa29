// TrialRecord identity, status and timing names, the fastest trial.
#include "results/trial_record.h"

#include <fmt/format.h>

#include "common/error.h"

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

// The format is stored in every database's key column: changing it orphans stored trials.
std::string TrialRecord::key() const {
  const MethodSet& m = config.methods;
  return fmt::format("{}|{}|{}x{}|fl={}|ckpt={}|{}|offload={}|mb={}|acc={}|mem={}",
                     model,
                     gpu,
                     cluster.num_nodes,
                     cluster.gpus_per_node,
                     m.free_lunch ? 1 : 0,
                     m.activation_checkpointing ? 1 : 0,
                     to_string(m.sharding),
                     m.offloading ? 1 : 0,
                     config.micro_batch_size,
                     config.grad_acc_steps,
                     memory_limit_bytes);
}

const TrialRecord* fastest_ok(const std::vector<TrialRecord>& trials) {
  const TrialRecord* best = nullptr;
  for (const TrialRecord& t : trials) {
    if (t.ok() && (best == nullptr || t.step_time_s() < best->step_time_s())) best = &t;
  }
  return best;
}

}  // namespace gpudays
