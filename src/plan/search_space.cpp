// Validity rules of the reference search space (shared/DESIGN.md, "Search space").
#include "plan/search_space.h"

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

void check_request(const ModelSpec& model, const Cluster& cluster) {
  if (cluster.gpu == nullptr) throw InputError("no GPU given");
  if (cluster.gpus_per_node < 1 || cluster.gpus_per_node > 64) {
    throw InputError(
        fmt::format("--gpus-per-node must be between 1 and 64, got {}", cluster.gpus_per_node));
  }
  if (cluster.num_nodes < 1 || cluster.num_nodes > 4096) {
    throw InputError(fmt::format("--nodes must be between 1 and 4096, got {}", cluster.num_nodes));
  }
  const int64_t world = cluster.world_size();
  const int64_t batch = model.recipe.global_batch;
  if (batch % world != 0 || !is_power_of_two(batch / world)) {
    throw InputError(fmt::format(
        "global batch {} of {} does not split into a power-of-two per-GPU batch over {} GPUs; "
        "use a GPU count that divides it into a power of two (for example 1, 2, 4 or 8)",
        batch, model.name, world));
  }
  if (model.recipe.precision == Precision::kBf16 && !cluster.gpu->supports_bf16()) {
    throw InputError(fmt::format("{} trains in bf16, which {} ({}) does not support; bf16 needs "
                                 "Ampere or newer",
                                 model.name, cluster.gpu->display_name, cluster.gpu->architecture));
  }
}

int64_t per_gpu_batch(const ModelSpec& model, const Cluster& cluster) {
  return model.recipe.global_batch / cluster.world_size();
}

std::string method_set_problem(const MethodSet& m, const Cluster& cluster) {
  if (m.offloading && m.sharding == Sharding::kNone) return "offloading needs sharding";
  if (cluster.world_size() == 1 && m.sharding != Sharding::kNone && !m.offloading) {
    return "sharding on one GPU is only useful with offloading";
  }
  return "";
}

std::vector<MethodSet> enumerate_method_sets(MethodPreset preset, const Cluster& cluster) {
  if (preset == MethodPreset::kNaive) return {MethodSet{}};
  if (preset == MethodPreset::kFreeLunch) return {MethodSet{.free_lunch = true}};
  std::vector<MethodSet> sets;
  for (bool free_lunch : {false, true}) {
    for (bool ckpt : {false, true}) {
      for (Sharding sharding : all_shardings()) {
        for (bool offload : {false, true}) {
          MethodSet m{free_lunch, ckpt, sharding, offload};
          if (method_set_problem(m, cluster).empty()) sets.push_back(m);
        }
      }
    }
  }
  return sets;
}

std::vector<TrainConfig> enumerate_configs(const ModelSpec& model, const Cluster& cluster,
                                           MethodPreset preset) {
  check_request(model, cluster);
  const int64_t per_gpu = per_gpu_batch(model, cluster);
  std::vector<TrainConfig> configs;
  for (const MethodSet& m : enumerate_method_sets(preset, cluster)) {
    for (int64_t micro = 1; micro <= per_gpu; micro *= 2) {
      configs.push_back(TrainConfig{m, micro, per_gpu / micro});
    }
  }
  return configs;
}

}  // namespace gpudays
