// `gpudays trial --spec FILE`: one benchmark trial, run by a sweep in its own process (under
// mpirun for several ranks). Builds the model and the engine, runs warm-up steps, times whole
// optimizer steps (every micro-step, the reduction, clipping, the optimizer and the synthetic data
// feed), synchronising the device before each clock read, and prints one JSON result line.
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "bench/trial_spec.h"
#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "common/error.h"
#include "dist/communicator.h"
#include "train/cpu_memory.h"
#include "train/engine.h"
#include "train/trainable.h"

namespace gpudays {
namespace {

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return "cpu: " + line.substr(line.find(':') + 2);
  }
  return "cpu";
}

void synchronize(const std::string& device) {
  if (device != "cpu") {
    throw InputError("this gpudays build runs trials on the CPU only (build the CUDA variant)");
  }
}

TrialResult time_steps(const TrialSpec& spec, const ModelSpec& model, Communicator& comm) {
  auto trainable = make_trainable(model, {spec.methods.free_lunch,
                                          spec.methods.activation_checkpointing, 1234});
  Engine engine(trainable->parameters(), comm,
                engine_options(model.recipe, spec.methods, spec.grad_acc_steps));
  const int64_t global = model.recipe.global_batch;
  const int64_t per_rank = spec.micro_batch_size * spec.grad_acc_steps;
  std::vector<double> seconds;
  for (int64_t s = 0; s < spec.warmup_steps + spec.timed_steps; ++s) {
    synchronize(spec.device);
    const auto start = std::chrono::steady_clock::now();
    engine.step([&](int64_t i) {
      return trainable->micro_loss(s * global + comm.rank() * per_rank + i * spec.micro_batch_size,
                                   spec.micro_batch_size);
    });
    synchronize(spec.device);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s >= spec.warmup_steps) seconds.push_back(elapsed);
  }
  std::sort(seconds.begin(), seconds.end());
  TrialResult r;
  r.status = TrialStatus::kOk;
  r.steps_timed = static_cast<int64_t>(seconds.size());
  r.step_time_median_s = seconds[seconds.size() / 2];
  r.step_time_min_s = seconds.front();
  r.step_time_max_s = seconds.back();
  return r;
}

// Runs the trial; rank 0 prints the result line.
void run_trial(const GlobalOptions& global, const TrialSpec& spec) {
  const ModelSpec model = spec.model_file.empty()
                              ? Catalog::load({global.config_dir}).model(spec.model)
                              : load_model_file(spec.model_file);
  auto comm = launched_with_several_ranks() ? make_mpi_communicator()
                                            : make_single_process_communicator();
  if (spec.micro_batch_size * spec.grad_acc_steps * comm->size() != model.recipe.global_batch) {
    throw InputError(fmt::format("micro-batch {} x accumulation {} x {} ranks is not the global "
                                 "batch {}", spec.micro_batch_size, spec.grad_acc_steps,
                                 comm->size(), model.recipe.global_batch));
  }
  CpuMemoryScope memory(spec.memory_limit_bytes);
  TrialResult r;
  try {
    r = time_steps(spec, model, *comm);
  } catch (const c10::OutOfMemoryError& e) {
    r.status = TrialStatus::kOutOfMemory;
    r.message = std::string(e.what_without_backtrace()).substr(0, 200);
  }
  r.peak_memory_bytes = memory.stats().peak_bytes;
  int64_t peak = r.peak_memory_bytes;  // the largest rank's
  comm->all_reduce(&peak, 1, DType::kInt64, ReduceOp::kMax);
  r.peak_memory_bytes = peak;
  r.device_name = cpu_name();
  r.torch_version = TORCH_VERSION;
  if (comm->rank() == 0) std::cout << to_json(r).dump() << "\n";
}

}  // namespace

void add_trial_command(CLI::App& app, const GlobalOptions& global) {
  auto spec_path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "trial", "Run one benchmark trial from a specification file (used by `gpudays bench`)");
  cmd->add_option("--spec", *spec_path, "Trial specification (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->callback([&global, spec_path] {
    std::ifstream in(*spec_path);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: not valid JSON ({})", *spec_path, e.what()));
    }
    run_trial(global, trial_spec_from_json(j));
  });
}

}  // namespace gpudays
