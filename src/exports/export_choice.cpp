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

Configuration planned_choice(const Catalog& catalog,
                             const ExportSelection& selection,
                             const ModelSpec& model,
                             const Cluster& cluster) {
  PlannerRequest request;
  request.pin = selection.pin;
  const PlanOptions options = planner_options(catalog, cluster.gpu->kind, request).options;
  const PlanResult p = plan(model, cluster, options);
  const PlanRow* best =
      fastest_fitting(p.rows, [&](const PlanRow& row) { return eligible(selection, row.config); });
  if (best == nullptr) {
    throw InputError(
        fmt::format("nothing fits {} on that hardware{}", model.name, selection_text(selection)));
  }
  return best->config;
}

std::optional<Configuration> measured_choice(std::vector<TrialRecord> trials,
                                             const ExportSelection& selection) {
  std::erase_if(trials, [&](const TrialRecord& t) { return !eligible(selection, t.config); });
  const TrialRecord* best = fastest_ok(trials);
  if (best == nullptr) return std::nullopt;
  return best->config;
}

}  // namespace gpudays
