// A run file's model, data, peak and benchmark figure, resolved for `gpudays train`.
#include "trainer/run_setup.h"

#include <fmt/format.h>

#include "catalog/gpu_peak.h"
#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "results/results_db.h"

namespace gpudays {

ModelSpec run_model(const Catalog& catalog, const RunFile& run, const std::string& run_path) {
  ModelSpec model = catalog.resolve_model(run.model_file.empty() ? run.model : "", run.model_file);
  model.recipe = apply_overrides(model.recipe, run.schedule, run_path);
  if (run.global_batch != model.recipe.global_batch) {
    throw InputError(fmt::format("{}: global_batch {} is not the recipe's {}",
                                 run_path,
                                 run.global_batch,
                                 model.recipe.global_batch));
  }
  return model;
}

std::string run_data_path(const RunFile& run, const std::string& given) {
  const std::string data = given.empty() ? run.data.path : given;
  if (data.empty()) throw InputError("train needs --data PREFIX (or [data] path in the run file)");
  return data;
}

double run_peak_flops_per_s(const Catalog& catalog,
                            const RunFile& run,
                            Precision precision,
                            double given_tflops) {
  if (given_tflops > 0.0) return given_tflops * 1e12;
  if (run.gpu == kHostCpuName) return 0.0;
  const GpuSpec& gpu = catalog.gpu(run.gpu);
  return matmul_peak(gpu, precision, run.methods.free_lunch).tflops * 1e12;
}

std::optional<double> benched_tokens_per_s(const Catalog& catalog,
                                           const std::string& db_path,
                                           const ModelSpec& model,
                                           const RunFile& run,
                                           const Configuration& config) {
  TrialRecord key;
  key.model_digest = model_digest(model);
  key.gpu = run.gpu;
  key.cluster = {run.num_nodes, run.gpus_per_node};
  key.config = config;
  std::optional<TrialRecord> t;
  try {
    t = ResultsDb::open({.path = db_path, .read_only = true, .catalog = &catalog}).find(key.key());
  } catch (const ResultsFileError& e) {  // named by train's flag, not bench's --db
    throw InputError(fmt::format("--bench-db: {}", e.what()));
  }
  if (!t || !t->ok()) return std::nullopt;
  return t->tokens_per_s;
}

}  // namespace gpudays
