// `sweep --slurm`: one Slurm batch job per GPU type of a sweep file, each running `gpudays sweep`
// on that type's cells (nodes and GPUs per node: the largest of its cells), trials under srun,
// every job storing into the same results database. Submission is slurm/slurm_submit.h's.
#pragma once

#include "catalog/catalog.h"
#include "slurm/slurm_submit.h"
#include "sweep/grid_run.h"
#include "sweep/sweep_grid.h"

namespace gpudays {

// Throws InputError (nothing submitted by that job) as submit_slurm_job does; a cluster file
// without a partition of one of the grid's GPU types, where --partition names none, is one line
// naming the file and the type.
void submit_sweep_jobs(const Catalog& catalog,
                       const SweepGrid& grid,
                       const GridOptions& options,
                       const SlurmRequest& slurm);

}  // namespace gpudays
