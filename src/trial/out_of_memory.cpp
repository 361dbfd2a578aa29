// Out-of-memory classification and the memory-limit rule for uncapped devices.
#include "trial/out_of_memory.h"

#include <c10/util/Exception.h>

#include <fmt/format.h>

#include "common/units.h"

namespace gpudays {

bool is_out_of_memory(const std::exception& error) {
  return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr;
}

TrialMeasurement out_of_memory_measurement(const std::exception& error, StepTiming timing) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  const std::string what =
      c10_error != nullptr ? c10_error->what_without_backtrace() : error.what();
  TrialMeasurement r;
  r.status = TrialStatus::kOutOfMemory;
  r.timing = timing;
  r.message = what.substr(0, 200);
  return r;
}

TrialMeasurement measure_or_out_of_memory(const std::function<TrialMeasurement()>& measure,
                                          StepTiming timing) {
  try {
    return measure();
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    return out_of_memory_measurement(e, timing);
  }
}

void count_peak_over_limit_as_oom(TrialMeasurement& measured, int64_t limit_bytes) {
  if (limit_bytes <= 0 || measured.status != TrialStatus::kOk) return;
  const bool reserved = measured.peak_reserved_bytes > 0;
  const int64_t peak = reserved ? measured.peak_reserved_bytes : measured.peak_memory_bytes;
  if (peak <= limit_bytes) return;
  measured.status = TrialStatus::kOutOfMemory;
  measured.message = fmt::format("peak {}{} over the memory limit {}",
                                 format_gib(static_cast<double>(peak)),
                                 reserved ? " reserved" : "",
                                 format_gib(static_cast<double>(limit_bytes)));
}

}  // namespace gpudays
