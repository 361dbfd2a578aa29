// TrialRecord identity and status names.
#include "results/trial_record.h"

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

std::string to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::kOk: return "ok";
    case TrialStatus::kOutOfMemory: return "oom";
    case TrialStatus::kCrash: return "crash";
    case TrialStatus::kTimeout: return "timeout";
    case TrialStatus::kRejected: return "rejected";
  }
  return "?";
}

TrialStatus parse_trial_status(const std::string& text) {
  for (TrialStatus s : {TrialStatus::kOk, TrialStatus::kOutOfMemory, TrialStatus::kCrash,
                        TrialStatus::kTimeout, TrialStatus::kRejected}) {
    if (to_string(s) == text) return s;
  }
  throw InputError(fmt::format("unknown trial status '{}'", text));
}

std::string TrialRecord::key() const {
  return fmt::format("{}|{}|{}x{}|fl={}|ckpt={}|{}|offload={}|mb={}|acc={}|mem={}", model, gpu,
                     num_nodes, gpus_per_node, free_lunch ? 1 : 0,
                     activation_checkpointing ? 1 : 0, sharding, offloading ? 1 : 0,
                     micro_batch_size, grad_acc_steps, memory_limit_bytes);
}

}  // namespace gpudays
