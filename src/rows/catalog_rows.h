// The catalog's rows: the model row (a catalog model, its size and its recipe) and the GPU row (a
// GPU's figures, each table's source beside them), as `gpudays models` and `gpudays gpus` print
// them in every format.
#pragma once

#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "rows/row_format.h"

namespace gpudays {

const std::vector<Column<ModelSpec>>& model_columns();
const std::vector<Column<GpuSpec>>& gpu_columns();

}  // namespace gpudays
