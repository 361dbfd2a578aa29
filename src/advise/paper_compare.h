// The reference paper's published training times ("$100K or 100 Days", Khandelwal et al. 2024,
// arXiv:2410.23261) beside gpudays' prediction or measurement for the same model and hardware,
// with the model FLOPs utilisation each published time implies. Torch-free; printing is the CLI's
// and the report's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/measurement.h"
#include "catalog/model_spec.h"
#include "cost/time_source.h"

namespace gpudays {

class Catalog;

// The measurement file (configs/measurements/) that holds the paper's own benchmark figures.
inline constexpr const char* kPaperSourceId = "100k-or-100-days-paper";

// Where a published time comes from: the paper's benchmark (its own timer), or its Table 1 of the
// models' original runs (GPUs x days as the models' authors reported them, carried by the
// catalog's [reported] tables).
enum class PaperCellKind { kBenchmark, kOriginalRun };
std::string to_string(PaperCellKind kind);  // "benchmark", "original_run"

// What a published run time implies: the run's model FLOPs over what the GPUs could do at their
// dense peak in that time.
struct ImpliedUtilisation {
  double model_flops_per_token = 0.0;  // the planner's count: 3 x forward, attention whole
  double run_flops = 0.0;              // per sample x global batch x steps
  double peak_flops_per_gpu = 0.0;     // dense peak of the recipe's matmul dtype, FLOP/s
  double mfu = 0.0;                    // run_flops / (days x 86400 x GPUs x peak)
  double matmul_ceiling = 0.0;         // the GPU's best measured matmul fraction of peak
  bool impossible = false;             // mfu above the ceiling
};

// run_flops / (days x 86,400 s x gpus x peak of the recipe's dtype on `gpu`). The FLOPs are the
// planner's (plan/workload.h), the peak the catalog's (free-lunch: TF32 for fp32 recipes).
ImpliedUtilisation implied_utilisation(const ModelSpec& model,
                                       const GpuSpec& gpu,
                                       int64_t gpus,
                                       double days);

struct PaperCell {
  PaperCellKind kind = PaperCellKind::kBenchmark;
  std::string name;      // the measurement case's name, or "<model>-original"
  std::string citation;  // table and cell (or line) it was read from
  std::string model;
  std::string gpu;  // catalog name
  ClusterShape layout;
  double published_days = 0.0;
  std::string published_settings;  // as published; empty when the source gives none
  ImpliedUtilisation implied;
  std::string verdict;  // empty when possible; else the one-line reason
  TrainingTime ours;    // gpudays' prediction (planner) or measurement (bench), same cell
};

// The one-line reason a published time is physically impossible.
std::string impossible_reason(const ImpliedUtilisation& implied, const GpuSpec& gpu);

// A published run's settings in the planner's words ("free-lunch, zero_2, offloading,
// checkpointing, micro-batch 10"); empty when the source gives none.
std::string published_settings(const Measurement& m);

// Every benchmark case of kPaperSourceId's file and every catalog model's original run whose GPU
// the catalog names, each beside `source`'s time for the same model, GPU and layout. Throws
// InputError when the paper's file is missing from `measurements`.
std::vector<PaperCell> compare_with_paper(const Catalog& catalog,
                                          const std::vector<MeasurementFile>& measurements,
                                          const TrainingTimeSource& source);
// The same over the catalog's own measurements (<config dir>/measurements).
std::vector<PaperCell> compare_with_paper(const Catalog& catalog, const TrainingTimeSource& source);

}  // namespace gpudays
