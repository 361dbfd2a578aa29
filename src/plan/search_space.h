// The reference search space and its validity rules: which method sets and micro-batches are
// valid for a model on a cluster. Invalid requests throw InputError with the reason.
#pragma once

#include <cstdint>
#include <vector>

#include "catalog/model_spec.h"
#include "plan/cluster.h"
#include "plan/methods.h"

namespace gpudays {

struct TrainConfig {
  MethodSet methods;
  int64_t micro_batch_size = 1;  // samples per GPU per micro-step
  int64_t grad_acc_steps = 1;    // micro-steps per optimizer step
};

// Rejects requests no configuration can satisfy: bad counts, a global batch that does not split
// into a power-of-two per-GPU batch, bf16 on a GPU without it.
void check_request(const ModelSpec& model, const Cluster& cluster);

// Samples each GPU processes per optimizer step (global batch / world size).
int64_t per_gpu_batch(const ModelSpec& model, const Cluster& cluster);

// Why a method set is invalid on this cluster, or empty when valid.
std::string method_set_problem(const MethodSet& methods, const Cluster& cluster);

// Every valid method set of the preset (naive: plain only; free-lunch: free-lunch only; all: every
// combination), in a stable order.
std::vector<MethodSet> enumerate_method_sets(MethodPreset preset, const Cluster& cluster);

// Every valid configuration: method sets x power-of-two micro-batches up to the per-GPU batch.
std::vector<TrainConfig> enumerate_configs(const ModelSpec& model, const Cluster& cluster,
                                           MethodPreset preset);

}  // namespace gpudays
