// The cells of a sweep file: here or elsewhere, planned, counted and run.
#include "sweep/grid_run.h"

#include <filesystem>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "common/error.h"
#include "sweep/bench_run.h"

namespace gpudays {
namespace {

int method_set_count(const PlanResult& prediction) {
  int sets = 0;
  for (size_t i = 0; i < prediction.rows.size(); ++i) {
    if (i == 0 || prediction.rows[i].config.methods != prediction.rows[i - 1].config.methods) {
      ++sets;
    }
  }
  return sets;
}

}  // namespace

bool runs_here(const SweepCell& cell, const GridOptions& o) {
  const bool cpu = o.here.device == "cpu";
  if (cpu != (cell.gpu == kHostCpuName) || cell.nodes > o.max_nodes) return false;
  if (!cpu && cell.gpu != o.here.gpu) return false;
  return o.max_gpus_per_node == 0 || cell.gpus_per_node <= o.max_gpus_per_node;
}

namespace {

// Runs `use` on the cell's request, model and set-up; returns why the cell is not valid, or "".
std::string with_cell(
    const Catalog& catalog,
    const SweepGrid& grid,
    const SweepCell& cell,
    const GridOptions& options,
    const std::function<void(const BenchRequest&, const ModelSpec&, const BenchSetup&)>& use) {
  try {
    const BenchRequest r = cell_request(grid, cell, options.here);
    const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
    const BenchSetup setup(options.config_dir, r, catalog);
    use(r, model, setup);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CellPlan plan_cell(const Catalog& catalog,
                   const SweepGrid& grid,
                   const SweepCell& cell,
                   const GridOptions& options) {
  CellPlan p;
  p.problem =
      with_cell(catalog,
                grid,
                cell,
                options,
                [&](const BenchRequest& r, const ModelSpec& model, const BenchSetup& setup) {
                  const PlanResult prediction = plan(model, setup.cluster(), setup.plan_options());
                  p.method_sets = method_set_count(prediction);
                  p.best = prediction.best;
                  std::string what;
                  if (r.device == "cuda")
                    p.bench_bound_s = bench_time_bound_s(prediction, r.timed_steps, what);
                });
  return p;
}

CellStatus cell_status(const Catalog& catalog,
                       const SweepGrid& grid,
                       const SweepCell& cell,
                       const GridOptions& options,
                       const ResultsDb& db) {
  CellStatus s;
  s.problem =
      with_cell(catalog,
                grid,
                cell,
                options,
                [&](const BenchRequest&, const ModelSpec& model, const BenchSetup& setup) {
                  s.replay = replay_sweep(
                      model, setup.cluster(), setup.plan_options(), setup.sweep_options(), db);
                });
  return s;
}

namespace {

// Benches one cell here; a cell with no successful configuration is said, and the grid goes on.
void run_cell(const Catalog& catalog,
              const BenchRequest& r,
              const GridOptions& options,
              GridRunSummary& total,
              std::ostream& out,
              const CellSummaryPrinter& print_summary) {
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  const SweepSummary s = run_bench_here(options.config_dir, r, catalog, model, out);
  print_summary(r, model, s);
  ++total.cells_run;
  total.trials_run += s.trials_run;
  total.trials_reused += s.trials_reused;
  if (!s.search.best) ++total.cells_failed;
}

}  // namespace

GridRunSummary run_grid(const Catalog& catalog,
                        const SweepGrid& grid,
                        const GridOptions& options,
                        std::ostream& out,
                        const CellSummaryPrinter& print_summary) {
  GridRunSummary total;
  const std::vector<SweepCell> cells = sweep_cells(grid);
  for (size_t i = 0; i < cells.size(); ++i) {
    const SweepCell& cell = cells[i];
    if (!runs_here(cell, options)) {
      ++total.cells_elsewhere;
      continue;
    }
    out << fmt::format("== cell {} of {}: {}\n", i + 1, cells.size(), cell.describe())
        << std::flush;
    if (std::filesystem::exists(options.here.db)) {
      const ResultsDb db =
          ResultsDb::open({.path = options.here.db, .read_only = true, .catalog = &catalog});
      const CellStatus status = cell_status(catalog, grid, cell, options, db);
      if (status.problem.empty() && status.replay.trials_left_bound == 0) {
        out << fmt::format(
            "complete: {} trials stored in {}\n", status.replay.trials_stored, options.here.db);
        ++total.cells_complete;
        continue;
      }
    }
    try {
      run_cell(catalog, cell_request(grid, cell, options.here), options, total, out, print_summary);
    } catch (const InputError& e) {
      out << fmt::format("skipped: {}\n", e.what());
      ++total.cells_invalid;
    }
  }
  return total;
}

}  // namespace gpudays
