// Fuzz target: the trial's JSON contract (sweep/trial_spec.h): trial_spec_from_json, which
// `gpudays trial --spec FILE` runs on a file the sweep (or a user) wrote, and parse_trial_output,
// which the sweep runs on a trial's last line. The input is one JSON text given to both. A bug is
// any escape other than InputError (the command line wraps JSON syntax errors, as here), any
// sanitizer report, an accepted spec outside what the trial runner relies on (micro-batch and
// accumulation >= 1 and their product no larger than any model's global batch, so that the runner's
// batch check cannot overflow; step counts and memory limit >= 0, at least one timed step), or one
// that does not survive to_json and back unchanged.
#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "sweep/trial_spec.h"

namespace {

void check_accepted(const gpudays::TrialSpec& s) {
  using gpudays::fuzz::fail;
  const int64_t micro = s.config.micro_batch_size;
  const int64_t acc = s.config.grad_acc_steps;
  if (micro < 1 || acc < 1 || micro > (int64_t{1} << 30) / acc) {
    fail("an accepted spec's micro-batch x accumulation is not in [1, 2^30]");
  }
  if (s.warmup_steps < 0 || s.timed_steps < 1 || s.check_steps < 0 || s.memory_limit_bytes < 0) {
    fail("an accepted spec has a negative step count or memory limit, or no timed step");
  }
  if (gpudays::to_json(gpudays::trial_spec_from_json(gpudays::to_json(s))) != gpudays::to_json(s)) {
    fail("an accepted spec changes through to_json and back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) fuzz::accepts([&] { check_accepted(trial_spec_from_json(j)); });
  fuzz::accepts([&] {
    const TrialMeasurement m = parse_trial_output(text);
    to_json(m).dump();
  });
  return 0;
}
