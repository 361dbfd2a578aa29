// The trainer: a catalog model trained on token samples (data/samples.h) with the methods of a
// run file (engine/apply_methods.h builds the engine), one rank or several; held-out evaluation,
// progress and metrics (trainer/train_log.h), checkpoints every N steps and on SIGTERM/SIGINT, and
// resumption from the newest valid checkpoint (trainer/train_state.h). `gpudays train` is its
// command line.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

#include "catalog/model_spec.h"
#include "data/samples.h"
#include "distributed/communicator.h"
#include "search_space/configuration.h"
#include "trainer/run_file.h"

namespace gpudays {

struct TrainerOptions {
  ModelSpec model;       // its recipe with the run file's overrides
  Configuration config;  // methods, micro-batch and accumulation for this number of ranks
  TrainSettings settings;
  double eval_fraction = 0.01;
  std::string out_dir;
  bool resume = false;
  std::string model_file;  // the model's TOML file, copied into checkpoints ("": a catalog model)
  std::string data_path;   // the tokenizer files beside it go into checkpoints
  std::string init_from;   // a checkpoint directory whose weights start the run ("": none)
  c10::Device device = c10::kCPU;
  double flops_per_sample = 0.0;  // model FLOPs of one training sample (forward + backward)
  double peak_flops_per_s = 0.0;  // the device's peak for the run's dtype, x ranks (0: no MFU)
};

// The trainable's and the engine's options of a run: engine/apply_methods.h on the run's
// configuration, recipe (with the run file's overrides) and device, as the benchmark's trial
// builds them (trial/trial_runner.h trial_methods).
struct MethodOptions;
MethodOptions trainer_methods(const TrainerOptions& options);

struct TrainSummary {
  int64_t first_step = 0;  // the step this run began at (a resumed run's checkpoint; else 0)
  int64_t steps = 0;       // the optimizer steps done, this run's and a resumed run's before it
  double last_loss = 0.0;
  std::optional<double> last_eval_loss;
  // The median step of this run after its first kTrainWarmupSteps (trainer/train_log.h; all of
  // them when it ran no more),
  // and its tokens per second; 0 when no step ran.
  double median_step_time_s = 0.0;
  double tokens_per_s = 0.0;
};

// Throws InputError for data that does not fit the model, Interrupted after checkpointing on a
// signal. Token samples train the causal LMs, image samples the vision models.
TrainSummary train(const TrainerOptions& options,
                   const data::TokenSamples& samples,
                   Communicator& comm);
TrainSummary train(const TrainerOptions& options,
                   const data::ImageSamples& samples,
                   Communicator& comm);
struct SampleBatches;  // trainer/sample_batches.h
TrainSummary train(const TrainerOptions& options, const SampleBatches& samples, Communicator& comm);

}  // namespace gpudays
