// Out-of-memory as a trial's result, not its failure: which errors are out-of-memory (LibTorch's
// c10::OutOfMemoryError, from CUDA's allocator or the CPU cap of engine/cpu_memory.h), the
// measurement they become (status oom), and the memory limit of a device that cannot be capped.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>

#include "results/trial_record.h"

namespace gpudays {

bool is_out_of_memory(const std::exception& error);

// The measurement of a trial that ran out of memory: status oom, the error's first 200 characters.
TrialMeasurement out_of_memory_measurement(const std::exception& error, StepTiming timing);

// Runs `measure`; an out-of-memory error becomes out_of_memory_measurement, any other propagates.
TrialMeasurement measure_or_out_of_memory(const std::function<TrialMeasurement()>& measure,
                                          StepTiming timing);

// A device the trial cannot cap (CUDA): an ok measurement whose peak exceeds `limit_bytes` (0:
// none) becomes out-of-memory, with a message giving both. The peak is the caching allocator's
// reserved memory where recorded (what the device had to give: a CUDA graph's pool keeps its
// memory from the rest), else the allocated.
void count_peak_over_limit_as_oom(TrialMeasurement& measured, int64_t limit_bytes);

}  // namespace gpudays
