// Reads a GPU catalog file (configs/gpus/<name>.toml; schema in docs/catalog.md) into a GpuSpec.
#pragma once

#include <string>

#include "catalog/gpu_spec.h"

namespace gpudays {

GpuSpec load_gpu_file(const std::string& path);

}  // namespace gpudays
