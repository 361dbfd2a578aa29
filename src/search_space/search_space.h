// The reference search space and its validity rules, written once: which precisions a device
// runs, which method sets and micro-batches are valid for a model on a cluster. Invalid requests
// throw InputError with the reason (in the vocabulary's words; the command line names its flags).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/model_spec.h"
#include "search_space/cluster.h"
#include "search_space/configuration.h"
#include "search_space/method_fields.h"
#include "search_space/methods.h"

namespace gpudays {

// bf16 needs Ampere or newer: compute capability 8.0 (NVIDIA CUDA C++ Programming Guide,
// "Compute Capabilities": bf16 tensor-core arithmetic from 8.0).
constexpr double kBf16MinComputeCapability = 8.0;

// Why `device` (its name, and its compute capability; 0 for a CPU) cannot train in `precision`,
// or empty when it can.
std::string precision_problem(Precision precision,
                              const std::string& device,
                              double compute_capability);
// The same for a device spec, whose kind decides: a GPU by its compute capability; the host CPU
// runs bf16 by autocast, and any precision whose matmuls its probe measured (fp32, bf16), not fp16.
std::string precision_problem(Precision precision, const GpuSpec& device);

// The cluster sizes the planner accepts.
constexpr int64_t kMaxGpusPerNode = 64;
constexpr int64_t kMaxNodes = 4096;
// The network between nodes, GB/s per node and direction, that the planner accepts (a flag's or a
// cluster file's): 0.01 GB/s (80 Mb/s) is below the slowest Ethernet that links servers (1 GbE is
// 0.125 GB/s), and a link closer to 0 made step times of hundreds of digits; 10^4 GB/s is ten
// times a node of eight 800 Gb/s NICs.
constexpr double kMinInterNodeGbPerS = 0.01;
constexpr double kMaxInterNodeGbPerS = 1e4;
// Host memory per node in GiB (--host-memory-gib, a cluster file's memory_per_node_gib): 1 GiB
// holds no offloaded optimizer state worth planning; 10^6 GiB is a thousand times a large node's.
constexpr double kMinHostMemoryGib = 1.0;
constexpr double kMaxHostMemoryGib = 1e6;
// "" when `gb_per_s` is a network the planner accepts; else the problem, naming the range.
std::string inter_node_problem(double gb_per_s);

// Rejects requests no configuration can satisfy: bad counts, a global batch that does not split
// into a power-of-two per-GPU batch, bf16 on a GPU without it.
void check_request(const ModelSpec& model, const Cluster& cluster);

// Samples each GPU processes per optimizer step (global batch / world size).
int64_t per_gpu_batch(const ModelSpec& model, const Cluster& cluster);

// Why a method set is invalid for `world_size` ranks, or empty when valid.
std::string method_set_problem(const MethodSet& methods, int64_t world_size);

// Every valid method set of the preset (naive: plain only; free-lunch: free-lunch only; all: every
// combination), in a stable order.
std::vector<MethodSet> enumerate_method_sets(MethodPreset preset, const Cluster& cluster);

// Fields of a configuration fixed by the caller (`plan --sharding zero_2 --micro-batch-size 8`):
// the search keeps the configurations that match every pinned field. An empty pin keeps all.
struct ConfigurationPin {
  MethodSet methods;           // the pinned fields' values; the others stay at their defaults
  uint32_t pinned_fields = 0;  // bit i: method_fields()[i] is pinned
  std::optional<int64_t> micro_batch_size;

  // pin(&MethodSet::sharding, Sharding::kZero2)
  template <typename T>
  ConfigurationPin& pin(T MethodSet::*member, T value) {
    methods.*member = value;
    pinned_fields |= uint32_t{1} << method_field_index(member);
    return *this;
  }
  // The field's value from its text ("on", "zero_2"); throws InputError naming the choices.
  void pin_text(const MethodField& field, std::string_view text);
  bool pinned(size_t field_index) const { return (pinned_fields >> field_index) & 1u; }
  bool empty() const { return *this == ConfigurationPin{}; }
  bool matches(const Configuration& config) const;
  bool operator==(const ConfigurationPin&) const = default;
};

// "free-lunch on, sharding zero_2, micro-batch 8"; empty for an empty pin.
std::string describe(const ConfigurationPin& pin);

// The method sets a bench searches, by name: a preset (naive, free-lunch, all), or one of the
// reference benchmark's grids (its experiments/sweep_configs/training_time_empirical/*.json):
// reference-naive (all_naive.json: no method, the naive preset) and reference-optimized
// (all_optimized.json: free-lunch on with every other method, the all preset with free-lunch
// pinned on: 12 method sets on one GPU, 22 on more).
struct MethodSelection {
  MethodPreset preset = MethodPreset::kAll;
  ConfigurationPin pin;
  bool operator==(const MethodSelection&) const = default;
};
MethodSelection parse_method_selection(const std::string& name);  // throws InputError naming them
std::vector<std::string> method_selection_names();

// `a` with the fields `b` pins as well; throws InputError when both pin a field differently
// (`a_what` and `b_what` say where each came from: "--methods reference-optimized").
ConfigurationPin combine_pins(const ConfigurationPin& a,
                              const std::string& a_what,
                              const ConfigurationPin& b,
                              const std::string& b_what);

// Every valid configuration: method sets x power-of-two micro-batches up to the per-GPU batch,
// those that match `pin`. Throws InputError with the reason when the pin admits none.
std::vector<Configuration> enumerate_configs(const ModelSpec& model,
                                             const Cluster& cluster,
                                             MethodPreset preset,
                                             const ConfigurationPin& pin = {});

}  // namespace gpudays
