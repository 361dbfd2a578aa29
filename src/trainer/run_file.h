// The run file `gpudays train --config` reads: the one `gpudays export --format toml` writes (the
// model, the hardware, the chosen methods and batch split), plus what a run needs (the schedule
// and its overrides, data, seed, checkpoint, evaluation and logging intervals). Torch-free; the
// training loop that uses it is trainer/trainer.h. Unknown keys are an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "catalog/model_spec.h"
#include "search_space/configuration.h"
#include "search_space/methods.h"

namespace gpudays {

// The recipe's schedule, each field optional (absent: the recipe's).
struct ScheduleOverrides {
  std::optional<int64_t> steps;
  std::optional<double> lr;
  std::optional<double> min_lr;
  std::optional<int64_t> warmup_steps;
  std::optional<double> clip_grad_norm;  // 0: no clipping
  bool operator==(const ScheduleOverrides&) const = default;
};

struct TrainSettings {
  uint64_t seed = 1234;                // data order and initialisation
  int64_t checkpoint_interval = 1000;  // steps; 0: only at the end and on a signal
  int64_t keep_checkpoints = 3;        // the newest K are kept
  int64_t eval_interval = 1000;        // steps; 0: never
  int64_t eval_samples = 64;           // held-out samples per evaluation (at most the split)
  int64_t log_interval = 1;            // steps between progress lines on standard error
  bool operator==(const TrainSettings&) const = default;
};

struct DataSettings {
  std::string path;             // token data prefix (--data overrides it)
  double eval_fraction = 0.01;  // held out for evaluation
  bool operator==(const DataSettings&) const = default;
};

struct RunFile {
  std::string model;       // catalog name, or ...
  std::string model_file;  // ... a model TOML file (relative to the run file)
  std::string gpu;         // catalog name, or "cpu"
  int64_t num_nodes = 1;
  int64_t gpus_per_node = 1;
  MethodSet methods;
  int64_t global_batch = 0;
  int64_t micro_batch_size = 1;
  int64_t grad_acc_steps = 1;
  ScheduleOverrides schedule;
  TrainSettings train;
  DataSettings data;
  bool operator==(const RunFile&) const = default;
};

// The run file as TOML: every table read_run_file reads, with the values of `run` (the schedule's
// overrides and the data path only when set). Reading it back gives `run`, model_file aside
// (which the reader resolves against the file's folder).
std::string run_file_toml(const RunFile& run);

// Throws InputError naming the file, table and key of anything missing, malformed or unknown.
RunFile read_run_file(const std::string& path);

// The run file's configuration on `world` ranks: its micro-batch and its accumulation, which is
// recomputed when the file was written for another rank count (global batch = micro-batch x
// accumulation x ranks). Throws InputError when the global batch does not split that way.
Configuration configuration_on(const RunFile& run, int64_t world);

// The recipe with the run file's schedule overrides applied. Throws InputError naming [schedule]
// (named by run_path)
// when they leave no room for the warm-up (warmup_steps >= steps) or put min_lr above lr.
RecipeSpec apply_overrides(RecipeSpec recipe,
                           const ScheduleOverrides& overrides,
                           const std::string& run_path = "the run file");

}  // namespace gpudays
