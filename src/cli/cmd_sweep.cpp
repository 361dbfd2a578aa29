// `gpudays sweep FILE`: a grid of bench cells from a sweep file (sweep/sweep_grid.h): the cells
// this machine runs, run one after the other (--dry-run: listed with the planner's prediction;
// --status: what the results database holds of each; --slurm: one Slurm job per GPU type). The
// logic is sweep/grid_run.h's and sweep/sweep_job.h's; this file parses and prints.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/slurm_options.h"
#include "common/error.h"
#include "common/units.h"
#include "rows/sweep_summary.h"
#include "sweep/bench_run.h"
#include "sweep/grid_run.h"
#include "sweep/sweep_job.h"

namespace gpudays {
namespace {

struct SweepRequest {
  std::string file;
  GridOptions grid;
  bool status = false;
  SlurmRequest slurm;
};

std::string predicted(const CellPlan& p) {
  if (!p.problem.empty()) return "skipped: " + p.problem;
  std::string out = fmt::format("{} method set{}; ", p.method_sets, p.method_sets == 1 ? "" : "s");
  if (!p.best) return out + "nothing fits (planner)";
  out += fmt::format("planner: {} ({}, micro-batch {} x {})",
                     format_duration_s(p.best->training_days * kSecondsPerDay),
                     describe(p.best->config.methods),
                     p.best->config.micro_batch_size,
                     p.best->config.grad_acc_steps);
  if (p.bench_bound_s > 0) out += fmt::format("; bench <= {}", format_duration_s(p.bench_bound_s));
  return out;
}

void print_dry_run(const Catalog& catalog, const SweepGrid& grid, const GridOptions& o) {
  const std::vector<SweepCell> cells = sweep_cells(grid);
  int here = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    const bool runs = runs_here(cells[i], o);
    here += runs ? 1 : 0;
    std::cout << fmt::format("{:>4} {} {}: {}\n",
                             i + 1,
                             runs ? "here" : "    ",
                             cells[i].describe(),
                             predicted(plan_cell(catalog, grid, cells[i], o)));
  }
  std::cout << fmt::format(
      "{} cells, {} of them run here ({}); strategy {}\n",
      cells.size(),
      here,
      o.here.device == "cpu" ? "the host CPU" : "GPU " + (o.here.gpu.empty() ? "?" : o.here.gpu),
      grid.strategy);
}

std::string status_line(const CellStatus& s) {
  if (!s.problem.empty()) return "invalid: " + s.problem;
  const SweepReplay& r = s.replay;
  if (r.trials_left_bound > 0) {
    return fmt::format("{}: {} trials stored, <= {} to run",
                       r.trials_stored == 0 ? "to do" : "partial",
                       r.trials_stored,
                       r.trials_left_bound);
  }
  if (!r.best) return fmt::format("done: {} trials stored, none succeeded", r.trials_stored);
  return fmt::format("done: {} trials stored; best {}, micro-batch {}: {:.3f} s per step",
                     r.trials_stored,
                     describe(r.best->request.methods),
                     r.best->request.micro_batch_size,
                     r.best->outcome.step_time_s);
}

void print_status(const Catalog& catalog, const SweepGrid& grid, const GridOptions& o) {
  const std::vector<SweepCell> cells = sweep_cells(grid);
  // No database yet: every valid cell is to do, judged against an empty one in memory.
  const bool none_yet = !std::filesystem::exists(o.here.db);
  if (none_yet) std::cout << o.here.db << ": no results database yet; nothing is done\n";
  const ResultsDb db = ResultsDb::open(
      {.path = none_yet ? ":memory:" : o.here.db, .read_only = !none_yet, .catalog = &catalog});
  int done = 0;
  int invalid = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    const CellStatus s = cell_status(catalog, grid, cells[i], o, db);
    done += s.problem.empty() && s.replay.trials_left_bound == 0 ? 1 : 0;
    invalid += s.problem.empty() ? 0 : 1;
    std::cout << fmt::format("{:>4} {}: {}\n", i + 1, cells[i].describe(), status_line(s));
  }
  std::cout << fmt::format("{} cells: {} done, {} to do, {} invalid\n",
                           cells.size(),
                           done,
                           static_cast<int>(cells.size()) - done - invalid,
                           invalid);
}

void run_sweep_file(const GlobalOptions& global, SweepRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const SweepGrid grid = load_sweep_grid(r.file, catalog);
  r.grid.config_dir = global.config_dir;
  if (r.slurm.submit || !r.slurm.cluster_file.empty()) {
    submit_sweep_jobs(catalog, grid, r.grid, r.slurm);
    return;
  }
  if (r.grid.here.device == "cuda" && !r.grid.here.gpu.empty()) {
    r.grid.here.gpu = catalog.gpu(r.grid.here.gpu).name;
  }
  if (r.slurm.dry_run) return print_dry_run(catalog, grid, r.grid);
  if (r.status) return print_status(catalog, grid, r.grid);
  if (r.grid.here.device == "cuda" && r.grid.here.gpu.empty()) {
    throw InputError("sweep runs here with --device cpu, or --gpu NAME (this machine's GPU)");
  }
  if (!global.has_trainer) throw InputError(needs_trainer("`gpudays sweep` here"));
  check_launch_place(r.grid.here.launcher, r.grid.max_nodes, "--max-nodes");
  check_results_db_path(r.grid.here.db, catalog);  // once, not as each cell's fault
  const GridRunSummary s =
      run_grid(catalog,
               grid,
               r.grid,
               std::cout,
               [](const BenchRequest& b, const ModelSpec& m, const SweepSummary& summary) {
                 print_sweep_summary(std::cout, /*json=*/false, b.db, m, summary);
               });
  std::cout << fmt::format(
      "sweep {}: {} cells benched ({} with no successful configuration), {} already complete, {} "
      "skipped as invalid, {} for other hardware; {} trials run, {} reused\n",
      grid.path,
      s.cells_run,
      s.cells_failed,
      s.cells_complete,
      s.cells_invalid,
      s.cells_elsewhere,
      s.trials_run,
      s.trials_reused);
  if (s.cells_invalid > 0 && s.cells_run + s.cells_complete + s.cells_elsewhere == 0) {
    throw InputError(
        fmt::format("no cell of {} is valid: each was skipped (the reasons are above)", grid.path));
  }
}

}  // namespace

void add_sweep_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<SweepRequest>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Benchmark a grid of models x GPU types x counts x method sets from a sweep file "
      "(docs/sweep.md), as the reference's search-space files do: the cells of this machine's "
      "device and GPU type run here, one bench each, resuming where the results database stops");
  cmd->add_option("FILE", r->file, "The sweep file (TOML; examples in configs/sweeps/)")
      ->required()
      ->check(CLI::ExistingFile);
  BenchRequest& here = r->grid.here;
  add_gpu_option(*cmd, here.gpu, "This machine's GPU (catalog name or alias): its cells run here");
  cmd->add_option(
         "--device", here.device, "cuda (the GPU cells of --gpu) or cpu (the \"cpu\" cells)")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--max-gpus-per-node",
                  r->grid.max_gpus_per_node,
                  "The most GPUs (ranks) per node a cell may need to run here (default: any)")
      ->check(CLI::Range(int64_t{1}, kMaxGpusPerNode));
  cmd->add_option("--max-nodes",
                  r->grid.max_nodes,
                  "The most nodes a cell may need to run here (more than 1 inside a Slurm job "
                  "of that many nodes, with --launcher srun)")
      ->check(CLI::Range(int64_t{1}, kMaxNodes))
      ->capture_default_str();
  cmd->add_option("--db", here.db, "Results database: trials stored in it are reused")
      ->capture_default_str();
  cmd->add_flag(
      "--status",
      r->status,
      "Print what the database holds of each cell (done, partial, to do) and run nothing");
  cmd->add_flag("--no-retry-killed", here.no_retry_killed, "As bench --no-retry-killed");
  cmd->add_option("--trial-stderr", here.trial_stderr_dir, "As bench --trial-stderr");
  cmd->add_option("--launcher", here.launcher, "How a trial's ranks start: mpirun, or srun")
      ->check(CLI::IsMember({"mpirun", "srun"}))
      ->capture_default_str();
  cmd->add_option("--srun-mpi", here.srun_mpi, "With --launcher srun: srun --mpi=...")
      ->capture_default_str();
  add_link_options(*cmd, here.links);
  add_slurm_options(*cmd, r->slurm);
  cmd->get_option("--dry-run")
      ->description(
          "List every cell with the planner's prediction (its fastest configuration, the days it "
          "takes, and the most time the cell's bench takes) and run nothing; with --slurm: print "
          "the sbatch scripts only");
  cmd->get_option("--slurm")->description(
      "Submit one Slurm job per GPU type of the grid instead of running here (each runs the "
      "cells of its GPU type, trials under srun)");
  cmd->footer(
      "Examples:\n"
      "  gpudays sweep configs/sweeps/reference-all-optimized.toml --dry-run --gpu a100\n"
      "  gpudays sweep configs/sweeps/reference-all-optimized.toml --gpu a100   # this A100 "
      "machine's cells\n"
      "  gpudays sweep configs/sweeps/reference-all-optimized.toml --status\n"
      "  gpudays sweep configs/sweeps/reference-all-naive.toml --slurm --cluster cluster.toml");
  cmd->callback([&global, r] { run_sweep_file(global, *r); });
}

}  // namespace gpudays
