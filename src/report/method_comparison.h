// The memory-saving methods comparison: for each model x GPU type at one GPU count, the fastest
// configuration of each memory-saving method combination (activation checkpointing, each sharding
// stage, offloading; free-lunch on in all of them), from the planner's rows of preset all.
// Rendering is report_tables_paper.cpp's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/planner.h"
#include "search_space/methods.h"

namespace gpudays {

struct MethodColumn {
  std::string label;  // "ckpt + zero_3"
  MethodSet methods;
};

// The combinations compared, lightest first: none, checkpointing, each sharding stage, and
// checkpointing and offloading over stage 3.
const std::vector<MethodColumn>& memory_saving_columns();

// One method set of the search and the days of its fastest configuration that fits.
struct MethodSetDays {
  MethodSet methods;
  std::optional<double> days;  // nullopt: no configuration of this method set fits
};

struct MethodComparison {
  std::string model;
  std::string gpu;
  ClusterShape layout;
  // Per column: training days of the fastest configuration of that method set that fits
  // (planner row); nullopt: none fits, or the search space has no such configuration here.
  std::vector<std::optional<double>> days;
  std::optional<double> best_days;  // the fastest of every row (preset all)
  // Every free-lunch method set the planner searched here (the reference's all_optimized grid),
  // in search order: the paper's memory-saving statistic and heat-map (paper_figures.h).
  std::vector<MethodSetDays> method_sets;
};

// Checkpointing, sharding or offloading on: what the paper calls a memory-saving method set
// (scripts/plotting/__init__.py, process_training_time_results with mem_saving_only).
bool is_memory_saving(const MethodSet& methods);

MethodComparison compare_memory_methods(const ModelSpec& model,
                                        const GpuSpec& gpu,
                                        const ClusterShape& layout,
                                        const PlanOptions& plan_options);

}  // namespace gpudays
