// A sweep file's cells at work: which of them this machine runs (its device and GPU type, one
// node), what the planner predicts of each (`sweep --dry-run`), what the results database holds of
// each (`sweep --status`: the reference's `count` and `print-incomplete`), and the run itself: one
// bench per cell here, cells already complete skipped, every trial reused from the database.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "catalog/catalog.h"
#include "sweep/bench_job.h"
#include "sweep/sweep.h"
#include "sweep/sweep_grid.h"

namespace gpudays {

struct GridOptions {
  std::string config_dir;
  // Where the cells run: device (cpu or cuda), this machine's GPU, the database, the launcher,
  // the trials' stderr and links; the cells' own fields come from the grid.
  BenchRequest here;
  int64_t max_gpus_per_node = 0;  // the most GPUs (ranks) per node this machine runs; 0: any
  int64_t max_nodes = 1;          // the most nodes (more than 1: inside a Slurm job of several)
};

// Whether this machine runs the cell: its device and GPU type, within the nodes and GPUs it has.
bool runs_here(const SweepCell& cell, const GridOptions& options);

// The planner's view of a cell, or why the cell is not valid (a batch that does not split over its
// GPUs, bf16 on a GPU without it: the reference drops such cells too).
struct CellPlan {
  std::string problem;          // non-empty: the cell is skipped
  int method_sets = 0;          // searched
  std::optional<PlanRow> best;  // the planner's fastest fitting configuration
  double bench_bound_s = 0.0;   // the most the cell's bench takes (bench_time_bound_s); GPU only
};
CellPlan plan_cell(const Catalog& catalog,
                   const SweepGrid& grid,
                   const SweepCell& cell,
                   const GridOptions& options);

// What the database holds of a cell: its search replayed over the stored trials.
struct CellStatus {
  std::string problem;  // non-empty: the cell is not valid
  SweepReplay replay;
};
CellStatus cell_status(const Catalog& catalog,
                       const SweepGrid& grid,
                       const SweepCell& cell,
                       const GridOptions& options,
                       const ResultsDb& db);

struct GridRunSummary {
  int cells_run = 0;        // benched now (some trials may have been reused)
  int cells_complete = 0;   // complete in the database before: nothing to run
  int cells_invalid = 0;    // skipped: not a valid cell
  int cells_elsewhere = 0;  // of another device, GPU type or size than this machine's
  int cells_failed = 0;     // benched, but no configuration ran successfully
  int trials_run = 0;
  int trials_reused = 0;
};

// Prints a benched cell's summary (the command line's: rows/sweep_summary.h).
using CellSummaryPrinter =
    std::function<void(const BenchRequest&, const ModelSpec&, const SweepSummary&)>;

// Runs every cell this machine runs, in the grid's order, printing a header line per cell and its
// progress on `out`, and its summary through `print_summary`.
GridRunSummary run_grid(const Catalog& catalog,
                        const SweepGrid& grid,
                        const GridOptions& options,
                        std::ostream& out,
                        const CellSummaryPrinter& print_summary);

}  // namespace gpudays
