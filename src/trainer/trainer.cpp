// The training loop, top to bottom: build, resume, then per step the rank's micro-batches through
// the engine, the global mean loss, evaluation, logging and checkpoints.
#include "trainer/trainer.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "catalog/param_count.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/units.h"
#include "engine/apply_methods.h"
#include "engine/autocast_scope.h"
#include "engine/cpu_memory.h"
#include "engine/device.h"
#include "engine/engine.h"
#include "engine/trainable.h"
#include "models/zoo.h"
#include "plan/step_figures.h"
#include "trainer/checkpoint_files.h"
#include "trainer/hf_handoff.h"
#include "trainer/sample_batches.h"
#include "trainer/train_log.h"
#include "trainer/train_state.h"

namespace gpudays {
namespace {

// What one run holds while it trains.
struct Run {
  const TrainerOptions& o;
  const SampleBatches& samples;
  Communicator& comm;
  data::Split split;
  std::unique_ptr<Trainable> trainable;
  std::unique_ptr<Engine> engine;
  StateLayout layout;
  std::string checkpoints_dir;
};

// The masking round of evaluation (training rounds are the step numbers): the held-out samples are
// masked the same at every evaluation.
constexpr uint64_t kEvalRound = ~uint64_t{0};

double mean_over_ranks(Communicator& comm, double value) {
  comm.all_reduce(&value, 1, DType::kFloat64, ReduceOp::kSum);
  return value / comm.size();
}

// Held-out loss over the first min(eval_samples, held-out) samples, split round-robin by rank.
double evaluate(Run& run) {
  at::NoGradGuard no_grad;
  run.engine->gather_parameters();
  run.trainable->set_training(false);
  const int64_t n = std::min(run.o.settings.eval_samples, run.split.eval_samples);
  const int64_t micro = run.o.config.micro_batch_size;
  const c10::DeviceType device = run.o.device.type();
  const Precision precision = run.o.model.recipe.precision;
  double sum = 0.0;
  std::vector<int64_t> indices;
  const auto flush = [&] {
    if (indices.empty()) return;
    double loss = 0.0;
    {
      const AutocastScope autocast(device, precision);
      loss = run.trainable->batch_loss(run.samples.batch(indices, kEvalRound)).item<double>();
    }
    sum += loss * static_cast<double>(indices.size());
    indices.clear();
  };
  for (int64_t i = run.comm.rank(); i < n; i += run.comm.size()) {
    indices.push_back(run.split.train_samples + i);
    if (static_cast<int64_t>(indices.size()) == micro) flush();
  }
  flush();
  run.trainable->set_training(true);
  run.comm.all_reduce(&sum, 1, DType::kFloat64, ReduceOp::kSum);
  return sum / static_cast<double>(std::max<int64_t>(n, 1));
}

void check_shapes(const std::vector<at::Tensor>& init,
                  const std::vector<at::Tensor>& params,
                  const std::string& dir) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (init[i].sizes() != params[i].sizes()) {
      throw InputError(fmt::format("{}: weights of another shape than the model's", dir));
    }
  }
}

void build_model_and_engine(Run& run);

// MemAvailable of /proc/meminfo in bytes; nullopt where it cannot be read.
std::optional<double> available_host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kib = 0.0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return std::nullopt;
}

// Bytes per parameter on the host at the least: fp32 weights, gradients and two Adam moments.
constexpr double kHostBytesPerParameter = 16.0;

// A model that cannot fit the host's available memory is refused before it is built: building it
// would end in the kernel's OOM killer or a LibTorch allocation error, not in one line.
void check_host_memory(const ModelSpec& model) {
  const double params = static_cast<double>(count_params(model).total);
  const double need_bytes = kHostBytesPerParameter * params;
  const std::optional<double> available = available_host_memory_bytes();
  if (!available || need_bytes <= *available) return;
  throw EnvironmentError(fmt::format(
      "{} has {:.3g} parameters: their fp32 weights, gradients and Adam moments need {:.1f} GiB "
      "of host memory, more than the {:.1f} GiB available (MemAvailable, /proc/meminfo)",
      model.name,
      params,
      need_bytes / kGiB,
      *available / kGiB));
}

// Builds the model (seeded: every rank starts from the same weights) and the engine; an allocation
// that fails is one line (exit 1), not a LibTorch error.
void build(Run& run) {
  if (run.o.device.is_cpu()) check_host_memory(run.o.model);
  try {
    build_model_and_engine(run);
  } catch (const std::bad_alloc&) {
    throw EnvironmentError(
        fmt::format("not enough host memory to build {} and its optimizer", run.o.model.name));
  } catch (const c10::Error& e) {
    if (std::string(e.what()).find("can't allocate memory") == std::string::npos) throw;
    throw EnvironmentError(fmt::format(
        "not enough memory to build {} and its optimizer: {}", run.o.model.name, one_line(e)));
  }
}

void build_model_and_engine(Run& run) {
  if (run.o.device.is_cpu()) keep_freed_host_memory();
  at::manual_seed(run.o.settings.seed);
  const MethodOptions methods = trainer_methods(run.o);
  run.trainable = make_trainable(run.o.model, methods.trainable);
  const std::vector<std::string> names = run.trainable->parameter_names();
  if (!run.o.init_from.empty()) {
    const std::vector<at::Tensor> init =
        read_pretrained_parameters(run.o.init_from, names, run.o.model.family);
    check_shapes(init, run.trainable->parameters(), run.o.init_from);
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> params = run.trainable->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(init[i].view_as(params[i]));
  }
  run.engine = make_engine(*run.trainable, run.comm, methods.engine);
  run.layout = state_layout(names, run.trainable->parameters(), *run.engine, run.o.device);
}

// Resumes from the newest valid checkpoint (rank 0 chooses; every rank loads the same one).
int64_t resume(Run& run) {
  constexpr int64_t kNone = -1;       // no checkpoint: the run starts
  constexpr int64_t kNoneValid = -2;  // checkpoints, every one failing its check: refused
  int64_t step = kNone;
  std::optional<FoundCheckpoint> found;
  if (run.comm.rank() == 0) {
    found = latest_checkpoint(run.checkpoints_dir, std::cerr);
    if (found)
      step = found->step;
    else if (!committed_steps(run.checkpoints_dir).empty())
      step = kNoneValid;
  }
  run.comm.broadcast(&step, 1, DType::kInt64, 0);
  if (step == kNoneValid) {
    // Starting over would train from step 0 beside the run's metrics and over its checkpoints.
    throw InputError(fmt::format(
        "--resume: no checkpoint in {} passes its check (each is named above); move them aside "
        "to start the run over",
        run.checkpoints_dir));
  }
  if (step < 0) {
    if (run.comm.rank() == 0) std::cerr << "gpudays: no checkpoint to resume from; starting\n";
    return 0;
  }
  if (!found) found = read_checkpoint(checkpoint_dir(run.checkpoints_dir, step));
  load_checkpoint(found->dir, found->state, *run.engine, run.layout, run.comm);
  if (run.comm.rank() == 0) std::cerr << fmt::format("gpudays: resumed from {}\n", found->dir);
  return step;
}

// This rank's micro-batch `micro` of step `step`: sample indices from the seeded global order.
std::vector<int64_t> micro_batch_indices(Run& run,
                                         data::SampleOrder& order,
                                         int64_t step,
                                         int64_t micro) {
  const int64_t global = run.o.model.recipe.global_batch;
  const data::RankSlice slice = data::rank_slice(global, run.comm.rank(), run.comm.size());
  const int64_t size = run.o.config.micro_batch_size;
  std::vector<int64_t> indices;
  for (int64_t j = 0; j < size; ++j)
    indices.push_back(order.at(step * global + slice.first + micro * size + j));
  return indices;
}

// The model file and the tokenizer files beside the data, which a checkpoint carries.
std::vector<std::string> checkpoint_files(const TrainerOptions& o) {
  std::vector<std::string> files;
  if (!o.model_file.empty()) files.push_back(o.model_file);
  const std::filesystem::path data_dir = std::filesystem::path(o.data_path).parent_path();
  for (const char* name : kTokenizerFiles) {
    const std::filesystem::path path = data_dir / name;
    if (!o.data_path.empty() && std::filesystem::exists(path)) files.push_back(path.string());
  }
  return files;
}

// The median of the steps after kTrainWarmupSteps (of all of them when no more ran).
double median_after_warmup(std::vector<double> times_s) {
  const auto skip = static_cast<std::ptrdiff_t>(
      times_s.size() > static_cast<size_t>(kTrainWarmupSteps) ? kTrainWarmupSteps : 0);
  std::vector<double> kept(times_s.begin() + skip, times_s.end());
  std::nth_element(kept.begin(), kept.begin() + kept.size() / 2, kept.end());
  return kept[kept.size() / 2];
}

}  // namespace

MethodOptions trainer_methods(const TrainerOptions& o) {
  return apply_methods(o.config, o.model.recipe, o.device, o.settings.seed);
}

TrainSummary train(const TrainerOptions& o, const data::TokenSamples& samples, Communicator& comm) {
  return train(o, token_batches(o.model, samples, o.settings.seed), comm);
}

TrainSummary train(const TrainerOptions& o, const data::ImageSamples& samples, Communicator& comm) {
  return train(o, image_batches(o.model, samples), comm);
}

TrainSummary train(const TrainerOptions& o, const SampleBatches& samples, Communicator& comm) {
  Run run{.o = o,
          .samples = samples,
          .comm = comm,
          .split = data::split_samples(samples.num_samples, o.eval_fraction),
          .trainable = nullptr,
          .engine = nullptr,
          .layout = {},
          .checkpoints_dir = (std::filesystem::path(o.out_dir) / "checkpoints").string()};
  if (comm.rank() == 0) std::filesystem::create_directories(run.checkpoints_dir);
  build(run);
  const int64_t first_step = o.resume ? resume(run) : 0;
  const int64_t total = o.model.recipe.train_steps;
  std::optional<MetricsLog> metrics;
  if (comm.rank() == 0) {
    metrics.emplace((std::filesystem::path(o.out_dir) / "metrics.jsonl").string(), first_step);
  }
  data::SampleOrder order(run.split.train_samples, o.settings.seed);
  const double tokens_per_step =
      static_cast<double>(o.model.recipe.global_batch * samples.tokens_per_sample);
  // The whole job's step; peak_flops_per_s is already the ranks' sum.
  const double global_batch = static_cast<double>(o.model.recipe.global_batch);
  const StepWork work{global_batch,
                      static_cast<double>(samples.tokens_per_sample),
                      o.flops_per_sample * global_batch,
                      0.0,
                      static_cast<double>(total),
                      1.0,
                      o.peak_flops_per_s};
  InterruptScope interrupt_scope;
  TrainSummary summary;
  summary.first_step = first_step;
  summary.steps = first_step;
  std::vector<double> step_times_s;  // this run's, for the summary's median
  for (int64_t step = first_step; step < total;) {
    synchronize(o.device);
    const auto begin = std::chrono::steady_clock::now();
    // The benchmark's step path: each micro-batch into the trainable's static device buffers,
    // then the loss from them (graphed where the methods allow).
    const MicroBatches batches{
        [&](int64_t micro) {
          return run.trainable->load_batch(run.samples.batch(
              micro_batch_indices(run, order, step, micro), static_cast<uint64_t>(step)));
        },
        [&] { return run.trainable->loaded_loss(); }};
    const StepResult r = run.engine->step(batches);
    synchronize(o.device);
    const double step_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    ++step;
    step_times_s.push_back(step_s);
    StepMetrics m;
    m.step = step;
    m.loss = mean_over_ranks(comm, r.loss);
    m.lr = r.lr;
    m.grad_norm = r.grad_norm;
    m.applied = r.applied;
    m.step_time_s = step_s;
    const StepFigures figures = step_figures(work, step_s);
    m.tokens_per_s = figures.tokens_per_s;
    m.mfu = figures.mfu;
    const int64_t every = o.settings.eval_interval;
    if (run.split.eval_samples > 0 && every > 0 && (step % every == 0 || step == total)) {
      m.eval_loss = evaluate(run);
      summary.last_eval_loss = m.eval_loss;
    }
    summary.steps = step;
    summary.last_loss = m.loss;
    if (metrics) {
      metrics->append(m);
      if (step % o.settings.log_interval == 0 || step == total) {
        std::cerr << progress_line(m, total) << std::endl;
      }
    }
    double signal = interrupted();
    comm.all_reduce(&signal, 1, DType::kFloat64, ReduceOp::kMax);
    const int64_t ckpt = o.settings.checkpoint_interval;
    if (signal > 0 || step == total || (ckpt > 0 && step % ckpt == 0)) {
      save_checkpoint(run.checkpoints_dir,
                      o.settings.keep_checkpoints,
                      *run.engine,
                      run.layout,
                      comm,
                      {step,
                       step * o.model.recipe.global_batch,
                       {{"model", o.model.name},
                        {"model_file", std::filesystem::path(o.model_file).filename().string()},
                        {"loss", m.loss}},
                       checkpoint_files(o)});
    }
    if (signal > 0) {
      if (comm.rank() == 0) {
        std::cerr << fmt::format(
            "gpudays: signal {}: checkpoint step-{} written; continue with "
            "--resume\n",
            static_cast<int>(signal),
            step);
      }
      throw Interrupted(static_cast<int>(signal));
    }
  }
  if (!step_times_s.empty()) {  // once, at the end: a median per step would cost O(steps) each
    summary.median_step_time_s = median_after_warmup(std::move(step_times_s));
    summary.tokens_per_s = tokens_per_step / summary.median_step_time_s;
  }
  return summary;
}

}  // namespace gpudays
