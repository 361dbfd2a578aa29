// The export's choice of configuration.
#include "exports/export_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "accuracy/planner_options.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "plan/planner.h"

namespace gpudays {

bool eligible(const ExportSelection& s, const Configuration& config) {
  return s.pin.matches(config) &&
         (!s.backend || export_backend(config.methods.sharding) == *s.backend);
}

std::string selection_text(const ExportSelection& s) {
  std::vector<std::string> parts;
  if (!s.pin.empty()) parts.push_back("pinned: " + describe(s.pin));
  if (s.backend) parts.push_back("backend " + to_string(*s.backend));
  return parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, "; "));
}

void pin_accumulation(ConfigurationPin& pin,
                      const ModelSpec& model,
                      int64_t world_size,
                      int64_t steps) {
  const int64_t global = model.recipe.global_batch;
  const int64_t per_gpu = global / world_size;
  const std::string batch = fmt::format(
      "{}'s per-GPU batch is {} ({} over {} GPUs)", model.name, per_gpu, global, world_size);
  if (steps < 1 || per_gpu % steps != 0) {
    throw InputError(fmt::format(
        "--gradient-accumulation-steps {}: {}, not a multiple of {}", steps, batch, steps));
  }
  const int64_t micro = per_gpu / steps;
  if (pin.micro_batch_size && *pin.micro_batch_size != micro) {
    throw InputError(
        fmt::format("--gradient-accumulation-steps {} with --micro-batch-size {}: {}, which needs "
                    "micro-batch x accumulation = {}",
                    steps,
                    *pin.micro_batch_size,
                    batch,
                    per_gpu));
  }
  pin.micro_batch_size = micro;
}

namespace {

// The eligible row with the smallest peak memory; null when none is eligible.
const PlanRow* leanest(const std::vector<PlanRow>& rows, const ExportSelection& selection) {
  const PlanRow* best = nullptr;
  for (const PlanRow& row : rows) {
    if (!eligible(selection, row.config)) continue;
    if (best == nullptr || row.memory.least_bytes() < best->memory.least_bytes()) best = &row;
  }
  return best;
}

}  // namespace

PlannedChoice planned_choice(const Catalog& catalog,
                             const ExportSelection& selection,
                             const ModelSpec& model,
                             const Cluster& cluster) {
  PlannerRequest request;
  request.pin = selection.pin;
  const PlanOptions options = planner_options(catalog, cluster.gpu->kind, request).options;
  const PlanResult p = plan(model, cluster, options);
  const PlanRow* best =
      fastest_fitting(p.rows, [&](const PlanRow& row) { return eligible(selection, row.config); });
  if (best != nullptr) return {best->config, ""};
  const PlanRow* row = leanest(p.rows, selection);
  if (row == nullptr) {
    throw InputError(
        fmt::format("no configuration of {} matches{}", model.name, selection_text(selection)));
  }
  return {row->config, row->reason.empty() ? "predicted not to fit" : row->reason};
}

std::optional<Configuration> measured_choice(std::vector<TrialRecord> trials,
                                             const ExportSelection& selection) {
  std::erase_if(trials, [&](const TrialRecord& t) { return !eligible(selection, t.config); });
  const TrialRecord* best = fastest_ok(trials);
  if (best == nullptr) return std::nullopt;
  return best->config;
}

}  // namespace gpudays
