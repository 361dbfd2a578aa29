// The memory-saving methods comparison from the planner's rows.
#include "report/method_comparison.h"

#include <algorithm>

#include "common/error.h"

namespace gpudays {
namespace {

// Keeps the fastest fitting days of the row's method set (adding the set when it is new).
void add_row_days(std::vector<MethodSetDays>& sets, const PlanRow& row) {
  auto it = std::find_if(sets.begin(), sets.end(), [&](const MethodSetDays& s) {
    return s.methods == row.config.methods;
  });
  if (it == sets.end()) it = sets.insert(sets.end(), MethodSetDays{row.config.methods, {}});
  if (row.fits) it->days = std::min(it->days.value_or(row.training_days), row.training_days);
}

}  // namespace

const std::vector<MethodColumn>& memory_saving_columns() {
  static const std::vector<MethodColumn> columns = [] {
    std::vector<MethodColumn> c;
    const auto add = [&c](bool ckpt, Sharding sharding, bool offload) {
      const MethodSet m{/*free_lunch=*/true, ckpt, sharding, offload};
      std::string label;
      if (ckpt) label = "ckpt";
      if (sharding != Sharding::kNone) label += (label.empty() ? "" : " + ") + to_string(sharding);
      if (offload) label += " + offload";
      c.push_back({label.empty() ? "none" : label, m});
    };
    add(/*ckpt=*/false, Sharding::kNone, /*offload=*/false);
    add(/*ckpt=*/true, Sharding::kNone, /*offload=*/false);
    for (Sharding s : all_shardings()) {
      if (s != Sharding::kNone) add(/*ckpt=*/false, s, /*offload=*/false);
    }
    add(/*ckpt=*/true, Sharding::kZero3, /*offload=*/false);
    add(/*ckpt=*/false, Sharding::kZero3, /*offload=*/true);
    add(/*ckpt=*/true, Sharding::kZero3, /*offload=*/true);
    return c;
  }();
  return columns;
}

MethodComparison compare_memory_methods(const ModelSpec& model,
                                        const GpuSpec& gpu,
                                        const ClusterShape& layout,
                                        const PlanOptions& plan_options) {
  const std::vector<MethodColumn>& columns = memory_saving_columns();
  MethodComparison out{model.name, gpu.name, layout, {}, std::nullopt, {}};
  out.days.assign(columns.size(), std::nullopt);
  PlanOptions options = plan_options;
  options.preset = MethodPreset::kAll;
  PlanResult result;
  try {
    result = plan(model, Cluster{layout, &gpu}, options);
  } catch (const InputError&) {
    return out;  // the batch does not split over this count: nothing to compare
  }
  if (result.best) out.best_days = result.best->training_days;
  for (const PlanRow& row : result.rows) {
    if (row.config.methods.free_lunch) add_row_days(out.method_sets, row);
    if (!row.fits) continue;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (row.config.methods != columns[c].methods) continue;
      out.days[c] = std::min(out.days[c].value_or(row.training_days), row.training_days);
    }
  }
  return out;
}

bool is_memory_saving(const MethodSet& methods) {
  return methods.activation_checkpointing || methods.sharding != Sharding::kNone ||
         methods.offloading;
}

}  // namespace gpudays
