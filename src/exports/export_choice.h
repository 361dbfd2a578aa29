// Which configuration an export writes: the fastest that matches the pins and runs on the wanted
// backend — measured (the fastest successful stored trial) or planned (the planner's order, planned
// as `plan` plans, accuracy/planner_options.h, so both choose the same row).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exports/export.h"
#include "results/trial_record.h"
#include "search_space/cluster.h"
#include "search_space/search_space.h"

namespace gpudays {

class Catalog;

struct ExportSelection {
  ConfigurationPin pin;
  std::optional<ExportBackend> backend;  // none: any (the row's own)
};

// It matches the pin and runs on the wanted backend.
bool eligible(const ExportSelection& selection, const Configuration& config);

// " (pinned: zero_2, micro-batch 8; backend fsdp)", or empty.
std::string selection_text(const ExportSelection& selection);

// --gradient-accumulation-steps as a micro-batch pin: the per-GPU batch (the recipe's global batch
// over `world_size`) divided by `steps`; throws InputError naming the numbers when it does not
// divide, or disagrees with a pinned micro-batch.
void pin_accumulation(ConfigurationPin& pin,
                      const ModelSpec& model,
                      int64_t world_size,
                      int64_t steps);

struct PlannedChoice {
  Configuration config;
  std::string misfit;  // why it is predicted not to fit; empty when it fits
};

// The planner's fastest eligible configuration that fits; where none fits, the eligible one that
// needs the least memory, with the reason it is predicted not to (an export of any valid
// configuration, warned). Throws InputError when the pins admit no configuration.
PlannedChoice planned_choice(const Catalog& catalog,
                             const ExportSelection& selection,
                             const ModelSpec& model,
                             const Cluster& cluster);

// The fastest eligible successful trial's configuration; none when there is no such trial.
std::optional<Configuration> measured_choice(std::vector<TrialRecord> trials,
                                             const ExportSelection& selection);

}  // namespace gpudays
