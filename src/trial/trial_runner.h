// The trial runner: one benchmark trial in this process (one rank of it), from its specification
// (sweep/trial_spec.h) to its measurement. Builds the model on the device and the engine, times
// whole steps or a step's parts composed into one (sweep/step_timing.h), checks the global batch,
// caps CPU memory, records the peak and the device's provenance; out-of-memory is a result. Parsing
// the specification and printing the result are `gpudays trial`'s; choosing trials, the sweep's.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <string>

#include "catalog/model_spec.h"
#include "distributed/communicator.h"
#include "sweep/trial_spec.h"

namespace gpudays {

// This process's rank of a launched trial: its device and the communicator of the launch
// (distributed/launcher.h). With several CUDA ranks each takes the GPU of its rank on the node.
struct TrialRank {
  c10::Device device = c10::kCPU;
  std::unique_ptr<Communicator> comm;
};
// `device_name`: cpu, cuda or cuda:N; throws InputError for anything else, or a build or machine
// without CUDA for a CUDA device.
TrialRank join_trial(const std::string& device_name);

// The trainable's and the engine's options of a trial: engine/apply_methods.h on the spec's
// configuration and the model's recipe, as `gpudays train` builds them (trainer_methods).
struct MethodOptions;
MethodOptions trial_methods(const TrialSpec& spec, const ModelSpec& model, c10::Device device);

// Runs the trial on this rank and returns the slowest rank's times and the largest rank's peak
// memory (a collective: every rank calls it). Throws InputError when micro-batch x accumulation x
// ranks is not the model's global batch. A rank that runs out of memory among several prints its
// result line itself (the trial protocol of sweep/trial_spec.h) and ends its process with
// _Exit(3): the other ranks may wait in a collective it will never join, and the launcher ends the
// job when one rank exits with an error.
TrialMeasurement run_trial(const TrialSpec& spec,
                           const ModelSpec& model,
                           Communicator& comm,
                           c10::Device device);

}  // namespace gpudays
