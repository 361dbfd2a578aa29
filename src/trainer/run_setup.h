// What a run file resolves to before training starts, torch-free: its model with the run's
// schedule, its data, the device's peak for MFU, and the benchmark's figure for the same
// configuration (`train --bench-db`).
#pragma once

#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "search_space/configuration.h"
#include "trainer/run_file.h"

namespace gpudays {

// The run's model (catalog name or model file) with the run file's schedule overrides; InputError
// when its global batch is not the recipe's. `run_path` names the file in errors.
ModelSpec run_model(const Catalog& catalog, const RunFile& run, const std::string& run_path);

// The data prefix: `given` (--data), else the run file's [data] path; InputError when neither.
std::string run_data_path(const RunFile& run, const std::string& given);

// The device's dense peak FLOP/s for the run's dtype (datasheet; TF32 with free-lunch in fp32),
// per rank: `given_tflops` when positive, none (0) for the host CPU.
double run_peak_flops_per_s(const Catalog& catalog,
                            const RunFile& run,
                            Precision precision,
                            double given_tflops);

// The tokens/s of the trial `gpudays bench` stored for this model (its digest: its architecture
// and recipe), hardware and configuration in the results database `db_path` (whole device
// memory), re-derived against `catalog`; none without a successful one. InputError naming
// --bench-db when the file is not a results database.
std::optional<double> benched_tokens_per_s(const Catalog& catalog,
                                           const std::string& db_path,
                                           const ModelSpec& model,
                                           const RunFile& run,
                                           const Configuration& config);

}  // namespace gpudays
