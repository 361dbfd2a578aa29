// A sweep file: a grid of benchmark cells (models x GPU types x node and GPU counts x method
// selections) measured under one strategy, as the reference benchmark's search-space JSON files
// describe its experiments (docs/sweep.md has the schema). Loading checks every key against the
// catalog and the search space; each cell becomes one bench request (sweep/bench_job.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "search_space/search_space.h"
#include "sweep/bench_job.h"

namespace gpudays {

struct SweepGrid {
  std::string path;                      // the file, as given
  std::vector<std::string> models;       // catalog names (HuggingFace ids resolved to names)
  std::vector<std::string> model_files;  // paths, relative ones resolved against the file's folder
  std::vector<std::string> gpus;         // catalog GPU names, or "cpu" (the host CPU)
  std::vector<int64_t> nodes = {1};
  std::vector<int64_t> gpus_per_node = {1};
  std::vector<std::string> methods = {"all"};  // method selections (parse_method_selection)
  ConfigurationPin pin;                        // [pin]: fields fixed in every cell
  std::string strategy = "guided";             // search/search.h: guided, exhaustive, reference
  std::string timing = "parts";
  int64_t timed_steps = 3;
  int64_t memory_limit_bytes = 0;
  double trial_timeout_s = 600.0;
};

// Throws InputError "FILE: KEY: problem" (one line) for a file that cannot be read or parsed, an
// unknown key, a wrong type, an unknown model, GPU, method selection or strategy, or a number out
// of range; files over 4 MiB are refused before parsing.
SweepGrid load_sweep_grid(const std::string& path, const Catalog& catalog);

// One cell of the grid: a model on a GPU type and count, with one method selection.
struct SweepCell {
  std::string model;       // catalog name; empty for a model file
  std::string model_file;  // or a model file
  std::string gpu;         // catalog name, or "cpu"
  int64_t nodes = 1;
  int64_t gpus_per_node = 1;
  std::string methods;

  std::string model_label() const;  // the catalog name, or the file
  std::string describe() const;     // "pythia-160m on 1 x 4 a100-80gb-sxm, reference-optimized"
};

// Every cell, models slowest, then GPUs, nodes, GPUs per node and method selections.
std::vector<SweepCell> sweep_cells(const SweepGrid& grid);

// The bench request of a cell: `here` (where it runs: database, launcher, trial stderr, links) with
// the cell's model, device, GPU and counts and the grid's strategy, timing, steps, limits and pins.
BenchRequest cell_request(const SweepGrid& grid, const SweepCell& cell, BenchRequest here);

}  // namespace gpudays
