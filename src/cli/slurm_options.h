// The Slurm options a submitting command shares (`bench --slurm`, `train --slurm`); the
// submission itself is slurm/slurm_submit.h's.
#pragma once

#include <CLI/CLI.hpp>

#include "slurm/slurm_submit.h"

namespace gpudays {

void add_slurm_options(CLI::App& cmd, SlurmRequest& r);

}  // namespace gpudays
