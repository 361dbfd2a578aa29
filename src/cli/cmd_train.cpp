// `gpudays train --config RUN.toml --data PREFIX --out DIR [--resume]`: the run file resolved
// (trainer/run_setup.h) on this launch's device and ranks (one process, or mpirun/srun), then
// trainer/trainer.h; with --slurm it submits the run as a Slurm job (cli/train_slurm.h).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/gpu_loader.h"
#include "cli/commands.h"
#include "cli/train_slurm.h"
#include "distributed/launcher.h"
#include "distributed/world.h"
#include "engine/device.h"
#include "plan/workload.h"
#include "trainer/run_directory.h"
#include "trainer/run_setup.h"
#include "trainer/train_log.h"
#include "trainer/trainer.h"

namespace gpudays {
namespace {

struct TrainRequest {
  std::string config;
  std::string data;
  std::string out;
  bool resume = false;
  std::string init_from;
  double peak_tflops = 0.0;
  std::string bench_db;     // --bench-db: the results whose trial of this configuration to compare
  LinkSettings links;       // --pair-bridge, --peer-to-peer; unset: the run's GPU file's
  TrainSlurmRequest slurm;  // --slurm: submit as a Slurm job (cli/train_slurm.h)
};

// Before any communicator exists: NCCL_P2P_DISABLE=1 for the ranks of GPUs without peer-to-peer,
// unless the environment sets it (NCCL reads it when its first communicator starts).
void set_collective_environment(const Catalog& catalog, const RunFile& run, const TrainRequest& r) {
  if (run.gpu == kHostCpuName || !launched_with_several_ranks()) return;
  const GpuSpec& gpu = catalog.gpu(run.gpu);
  check_links_possible(gpu, r.links);
  for (const EnvironmentVariable& v : collective_environment(r.links.peer_to_peer_on(gpu))) {
    setenv(v.name.c_str(), v.value.c_str(), /*overwrite=*/0);
  }
}

// What the run did: trained from the start, resumed and trained to the end, or found the run
// finished (nothing to train, no loss).
std::string summary_line(const TrainSummary& s, int64_t total_steps, const std::string& out) {
  if (s.steps == s.first_step) {
    return fmt::format(
        "nothing to train: the run is at step {} of {}; checkpoints in {}/checkpoints",
        s.steps,
        total_steps,
        out);
  }
  std::string line = s.first_step == 0
                         ? fmt::format("trained {} steps", s.steps)
                         : fmt::format("resumed at step {} and trained to step {} ({} steps)",
                                       s.first_step,
                                       s.steps,
                                       s.steps - s.first_step);
  line += fmt::format("; last loss {:.4f}", s.last_loss);
  if (s.last_eval_loss) line += fmt::format("; held-out loss {:.4f}", *s.last_eval_loss);
  return line + fmt::format("; checkpoints in {}/checkpoints", out);
}

void run_train(const GlobalOptions& global, const TrainRequest& r) {
  const RunFile run = read_run_file(r.config);
  const Catalog catalog = Catalog::load({global.config_dir});
  if (run.gpu != kHostCpuName) catalog.gpu(run.gpu);  // an unknown GPU names the valid ones
  TrainerOptions o;
  o.model = run_model(catalog, run, r.config);
  const std::string data = run_data_path(run, r.data);
  o.device = rank_device(parse_device(run.gpu == kHostCpuName ? "cpu" : "cuda"),
                         launched_with_several_ranks(),
                         local_rank(),
                         cuda_device_count());
  use_device(o.device);  // before any CUDA work of this rank
  set_collective_environment(catalog, run, r);
  const std::unique_ptr<Communicator> comm =
      make_communicator(o.device.is_cpu() ? RankDevice::kCpu : RankDevice::kCuda,
                        o.device.is_cuda() ? o.device.index() : 0,
                        world_options_from_environment());
  // Rank 0 claims the run directory (a refusal ends the launch: mpirun and srun stop the rest).
  std::optional<RunDirectoryClaim> claim;
  if (comm->rank() == 0) claim.emplace(r.out, r.resume);
  o.config = configuration_on(run, comm->size());
  // Said where it differs from the file's (given for another rank count, or its default of 1).
  if (comm->rank() == 0 && o.config.grad_acc_steps != run.grad_acc_steps) {
    std::cerr << fmt::format(
        "gpudays: note: accumulating {} micro-batch{} of {} on {} rank{} to make the global "
        "batch of {}\n",
        o.config.grad_acc_steps,
        o.config.grad_acc_steps == 1 ? "" : "es",
        run.micro_batch_size,
        comm->size(),
        comm->size() == 1 ? "" : "s",
        run.global_batch);
  }
  o.settings = run.train;
  o.eval_fraction = run.data.eval_fraction;
  o.out_dir = r.out;
  o.resume = r.resume;
  o.init_from = r.init_from;
  o.model_file = run.model_file;
  o.data_path = data;
  o.flops_per_sample = training_flops_per_sample(o.model);
  o.peak_flops_per_s =
      run_peak_flops_per_s(catalog, run, o.model.recipe.precision, r.peak_tflops) * comm->size();
  // Read before training: a file that is not a results database fails now, not after the run.
  std::optional<double> bench;
  if (comm->rank() == 0 && !r.bench_db.empty()) {
    bench = benched_tokens_per_s(catalog, r.bench_db, o.model, run, o.config);
  }
  TrainSummary s;
  if (is_vision(o.model.family)) {
    s = train(o, *data::open_image_samples(data), *comm);
  } else {
    // A sample of seq_len + 1 tokens is inputs and shifted labels: the model's context is seq_len.
    s = train(o, *data::open_token_samples(data, o.model.arch.seq_len - 1), *comm);
  }
  if (comm->rank() == 0 && !r.bench_db.empty() && s.tokens_per_s > 0.0) {
    std::cerr << "gpudays: " << throughput_line(s.tokens_per_s, bench) << "\n";
  }
  if (comm->rank() == 0) std::cout << summary_line(s, o.model.recipe.train_steps, r.out) << "\n";
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<TrainRequest>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Train a model with a run file's settings (from `gpudays export --format toml`), on one "
      "process or each rank of an mpirun/srun launch; checkpoints in OUT/checkpoints");
  cmd->add_option("--config", r->config, "Run file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--data", r->data, "Token data prefix (default: the run file's [data] path)");
  cmd->add_option("--out", r->out, "Output directory (checkpoints, metrics.jsonl)")->required();
  cmd->add_flag("--resume", r->resume, "Continue from the newest valid checkpoint in OUT");
  cmd->add_option(
      "--init-from", r->init_from, "Start from the weights of this checkpoint directory");
  cmd->add_option("--peak-tflops",
                  r->peak_tflops,
                  "The device's peak TFLOP/s per rank for MFU (default: the catalog GPU's; none "
                  "for the CPU)")
      ->check(number_check(0.0, 1e6, /*low_open=*/true));
  cmd->add_option(
         "--bench-db",
         r->bench_db,
         "After training, print this run's median tokens/s beside the benchmark's trial of "
         "the same configuration in this results database")
      ->check(CLI::ExistingFile);
  add_link_options(*cmd, r->links);
  add_train_slurm_options(*cmd, r->slurm);
  cmd->callback([&global, r, cmd] {
    if (!submit_train_job_if_asked(global, *cmd, r->slurm, r->links)) run_train(global, *r);
  });
}

}  // namespace gpudays
