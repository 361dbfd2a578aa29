// Alternatives for a request with no feasible configuration.
#include "plan/suggest.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

constexpr int64_t kMaxGpus = 512;

std::optional<PlanRow> best_or_none(const ModelSpec& model,
                                    const Cluster& cluster,
                                    const PlanOptions& options) {
  try {
    return plan(model, cluster, options).best;
  } catch (const InputError&) {
    return std::nullopt;  // e.g. the batch does not split over this count
  }
}

std::optional<Suggestion> more_gpus(const ModelSpec& model,
                                    const Cluster& cluster,
                                    const PlanOptions& options) {
  for (int64_t world = cluster.world_size() * 2; world <= kMaxGpus; world *= 2) {
    Cluster bigger = cluster;
    bigger.gpus_per_node = std::min<int64_t>(world, std::max<int64_t>(cluster.gpus_per_node, 8));
    bigger.num_nodes = world / bigger.gpus_per_node;
    if (auto best = best_or_none(model, bigger, options)) {
      return Suggestion{SuggestionKind::kMoreGpus,
                        fmt::format("{} x {} ({} node{} x {})",
                                    world,
                                    cluster.gpu->name,
                                    bigger.num_nodes,
                                    bigger.num_nodes > 1 ? "s" : "",
                                    bigger.gpus_per_node),
                        *best};
    }
  }
  return std::nullopt;
}

std::optional<Suggestion> larger_gpu(const ModelSpec& model,
                                     const Cluster& cluster,
                                     const std::vector<GpuSpec>& gpus,
                                     const PlanOptions& options) {
  std::vector<const GpuSpec*> candidates;
  for (const GpuSpec& g : gpus) {
    if (g.memory_bytes > cluster.gpu->memory_bytes) candidates.push_back(&g);
  }
  std::sort(candidates.begin(), candidates.end(), [](const GpuSpec* a, const GpuSpec* b) {
    return a->purchase_usd < b->purchase_usd;
  });
  // A power-limited GPU's alternatives run under the same share of their TDP.
  const GpuSpec& mine = *cluster.gpu;
  const double share = mine.power_limit_share();
  const double limit_fraction = share < 1.0 ? share : 0.0;  // 0: at the TDP
  for (const GpuSpec* g : candidates) {
    GpuSpec capped = *g;
    if (limit_fraction > 0.0) capped.limit_power_to_share(limit_fraction);
    Cluster other = cluster;
    other.gpu = &capped;
    if (auto best = best_or_none(model, other, options)) {
      const std::string cap =
          limit_fraction > 0.0
              ? fmt::format(", limited to {:.0f}% of its TDP as yours is", 100.0 * limit_fraction)
              : "";
      return Suggestion{SuggestionKind::kLargerGpu,
                        fmt::format("{} x {} (cheapest GPU with more memory that fits{})",
                                    cluster.world_size(),
                                    g->name,
                                    cap),
                        *best};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Suggestion> suggest_alternatives(const ModelSpec& model,
                                             const Cluster& cluster,
                                             const std::vector<GpuSpec>& gpus,
                                             const PlanOptions& options) {
  std::vector<Suggestion> out;
  PlanOptions all = options;
  all.preset = MethodPreset::kAll;
  if (!options.pin.empty()) {
    PlanOptions unpinned = all;
    unpinned.pin = {};
    if (auto best = best_or_none(model, cluster, unpinned)) {
      out.push_back({SuggestionKind::kUnpinned,
                     "without the pinned " + describe(options.pin) + " (the full search)",
                     *best});
    }
  } else if (options.preset != MethodPreset::kAll) {
    if (auto best = best_or_none(model, cluster, all)) {
      out.push_back({SuggestionKind::kAllMethods,
                     "all methods (checkpointing, sharding, offloading)",
                     *best});
    }
  }
  if (auto s = more_gpus(model, cluster, all)) out.push_back(*s);
  if (auto s = larger_gpu(model, cluster, gpus, all)) out.push_back(*s);
  return out;
}

}  // namespace gpudays
