// The Slurm options a submitting command shares (`bench --slurm`, `train --slurm`); the
// submission itself is slurm/slurm_submit.h's.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "slurm/slurm_submit.h"

namespace gpudays {

// Adds them to `cmd`; returns the names of those added (--slurm and the options that apply only
// with it).
std::vector<std::string> add_slurm_options(CLI::App& cmd, SlurmRequest& r);
// Without --slurm (`submit` false), InputError "NAME applies only with --slurm" for the first of
// `names` that `cmd` got.
void refuse_without_slurm(const CLI::App& cmd, const std::vector<std::string>& names, bool submit);

// Trials that run here (bench, sweep) under `launcher` on up to `nodes` nodes: srun starts job
// steps of a Slurm allocation and fails outside one (no SLURM_JOB_ID), and mpirun starts every
// rank on this host, so more than one node needs srun. InputError before any trial, so that no
// launch failure is stored as a configuration's crash.
void check_launch_place(const std::string& launcher, int64_t nodes, const std::string& nodes_flag);

}  // namespace gpudays
