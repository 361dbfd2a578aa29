// Validity rules of the reference search space (shared/DESIGN.md, "Search space").
#include "search_space/search_space.h"

#include <algorithm>

#include <fmt/format.h>

#include "catalog/gpu_peak.h"
#include "common/error.h"

namespace gpudays {
namespace {

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

}  // namespace

void check_request(const ModelSpec& model, const Cluster& cluster) {
  if (cluster.gpu == nullptr) throw InputError("no GPU given");
  if (cluster.gpus_per_node < 1 || cluster.gpus_per_node > kMaxGpusPerNode) {
    throw InputError(fmt::format(
        "GPUs per node must be between 1 and {}, got {}", kMaxGpusPerNode, cluster.gpus_per_node));
  }
  if (cluster.num_nodes < 1 || cluster.num_nodes > kMaxNodes) {
    throw InputError(
        fmt::format("nodes must be between 1 and {}, got {}", kMaxNodes, cluster.num_nodes));
  }
  const int64_t world = cluster.world_size();
  const int64_t batch = model.recipe.global_batch;
  if (batch % world != 0 || !is_power_of_two(batch / world)) {
    throw InputError(fmt::format(
        "global batch {} of {} does not split into a power-of-two per-GPU batch over {} GPUs; "
        "use a GPU count that divides it into a power of two (for example 1, 2, 4 or 8)",
        batch,
        model.name,
        world));
  }
  const std::string precision = precision_problem(model.recipe.precision, *cluster.gpu);
  if (!precision.empty()) throw InputError(fmt::format("{}: {}", model.name, precision));
}

int64_t per_gpu_batch(const ModelSpec& model, const Cluster& cluster) {
  return model.recipe.global_batch / cluster.world_size();
}

std::string inter_node_problem(double gb_per_s) {
  if (gb_per_s >= kMinInterNodeGbPerS && gb_per_s <= kMaxInterNodeGbPerS) return "";
  return fmt::format("{} GB/s is not in [{:g}, {:g}] GB/s (the network per node and direction)",
                     gb_per_s,
                     kMinInterNodeGbPerS,
                     kMaxInterNodeGbPerS);
}

std::string precision_problem(Precision precision,
                              const std::string& device,
                              double compute_capability) {
  if (precision != Precision::kBf16 || compute_capability >= kBf16MinComputeCapability) return "";
  if (compute_capability <= 0.0) return "";  // a CPU: bf16 autocast runs there
  return fmt::format(
      "bf16 needs an Ampere or newer GPU (compute capability {:.1f}); {} has {:.1f} "
      "(use fp16 or fp32)",
      kBf16MinComputeCapability,
      device,
      compute_capability);
}

std::string precision_problem(Precision precision, const GpuSpec& device) {
  if (device.kind == DeviceKind::kGpu) {
    return precision_problem(precision, device.display_name, device.compute_capability);
  }
  if (matmul_peak(device, precision, /*tf32_allowed=*/false).tflops > 0.0) return "";
  return fmt::format(
      "{} on the host CPU ({}) has no measured matmul throughput (its probe "
      "measures fp32 and bf16; fp16 matmuls are far slower than fp32 on most CPUs); "
      "use {}",
      to_string(precision),
      device.display_name,
      device.supports_bf16() ? "bf16 or fp32" : "fp32");
}

std::string method_set_problem(const MethodSet& m, int64_t world_size) {
  if (m.offloading && m.sharding == Sharding::kNone) return "offloading needs sharding";
  if (world_size == 1 && m.sharding != Sharding::kNone && !m.offloading) {
    return "sharding on one GPU is only useful with offloading";
  }
  return "";
}

std::vector<MethodSet> enumerate_method_sets(MethodPreset preset, const Cluster& cluster) {
  if (preset == MethodPreset::kNaive) return {MethodSet{}};
  if (preset == MethodPreset::kFreeLunch) return {MethodSet{.free_lunch = true}};
  std::vector<MethodSet> sets;
  for (const MethodSet& m : every_method_set()) {
    if (method_set_problem(m, cluster.world_size()).empty()) sets.push_back(m);
  }
  return sets;
}

void ConfigurationPin::pin_text(const MethodField& field, std::string_view text) {
  field.set_text(methods, text);
  pinned_fields |= uint32_t{1} << method_field_index(field.member);
}

bool ConfigurationPin::matches(const Configuration& c) const {
  const std::span<const MethodField> fields = method_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (pinned(i) && !fields[i].same(methods, c.methods)) return false;
  }
  return !micro_batch_size || *micro_batch_size == c.micro_batch_size;
}

std::string describe(const ConfigurationPin& pin) {
  std::vector<std::string> parts;
  const std::span<const MethodField> fields = method_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (pin.pinned(i))
      parts.push_back(fmt::format("{} {}", fields[i].label, fields[i].text(pin.methods)));
  }
  if (pin.micro_batch_size) parts.push_back(fmt::format("micro-batch {}", *pin.micro_batch_size));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

namespace {

constexpr const char* kReferenceNaive = "reference-naive";
constexpr const char* kReferenceOptimized = "reference-optimized";

}  // namespace

MethodSelection parse_method_selection(const std::string& name) {
  if (name == kReferenceNaive) return {MethodPreset::kNaive, {}};
  if (name == kReferenceOptimized) {
    MethodSelection s{MethodPreset::kAll, {}};
    s.pin.pin(&MethodSet::free_lunch, true);
    return s;
  }
  const std::vector<std::string> names = method_selection_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw InputError(fmt::format("unknown method sets '{}'; valid: {}", name, join_choices(names)));
  }
  return {parse_preset(name), {}};
}

std::vector<std::string> method_selection_names() {
  return {"naive", "free-lunch", "all", kReferenceNaive, kReferenceOptimized};
}

ConfigurationPin combine_pins(const ConfigurationPin& a,
                              const std::string& a_what,
                              const ConfigurationPin& b,
                              const std::string& b_what) {
  ConfigurationPin out = a;
  const std::span<const MethodField> fields = method_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!b.pinned(i)) continue;
    if (a.pinned(i) && !fields[i].same(a.methods, b.methods)) {
      throw InputError(fmt::format("{} pins {} {}, which contradicts {} ({} {})",
                                   b_what,
                                   fields[i].label,
                                   fields[i].text(b.methods),
                                   a_what,
                                   fields[i].label,
                                   fields[i].text(a.methods)));
    }
    out.pin_text(fields[i], fields[i].text(b.methods));
  }
  if (b.micro_batch_size) out.micro_batch_size = b.micro_batch_size;
  return out;
}

namespace {

// Why no configuration of the preset matches the pin.
std::string pin_problem(const ConfigurationPin& pin,
                        const Cluster& cluster,
                        MethodPreset preset,
                        int64_t per_gpu) {
  if (pin.micro_batch_size &&
      (!is_power_of_two(*pin.micro_batch_size) || *pin.micro_batch_size > per_gpu)) {
    return fmt::format("micro-batch {} is not a power of two up to the per-GPU batch of {}",
                       *pin.micro_batch_size,
                       per_gpu);
  }
  for (const MethodSet& m : enumerate_method_sets(MethodPreset::kAll, cluster)) {
    if (pin.matches(Configuration{m, pin.micro_batch_size.value_or(1), 1})) {
      return fmt::format("the method preset '{}' excludes {}", to_string(preset), describe(pin));
    }
  }
  const std::string problem = method_set_problem(pin.methods, cluster.world_size());
  return problem.empty() ? "no valid configuration matches " + describe(pin) : problem;
}

}  // namespace

std::vector<Configuration> enumerate_configs(const ModelSpec& model,
                                             const Cluster& cluster,
                                             MethodPreset preset,
                                             const ConfigurationPin& pin) {
  check_request(model, cluster);
  const int64_t per_gpu = per_gpu_batch(model, cluster);
  std::vector<Configuration> configs;
  for (const MethodSet& m : enumerate_method_sets(preset, cluster)) {
    for (int64_t micro = 1; micro <= per_gpu; micro *= 2) {
      const Configuration c{m, micro, per_gpu / micro};
      if (pin.matches(c)) configs.push_back(c);
      if (micro > per_gpu / 2) break;  // the next doubling would pass per_gpu (or overflow)
    }
  }
  if (configs.empty()) {
    throw InputError(fmt::format("{} on {} x {}: {}",
                                 model.name,
                                 cluster.world_size(),
                                 cluster.gpu->name,
                                 pin_problem(pin, cluster, preset, per_gpu)));
  }
  return configs;
}

}  // namespace gpudays
