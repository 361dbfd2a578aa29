// A zoo model made trainable by the engine on synthetic data, as the reference benchmarks: its
// parameters, and the loss of a micro-batch of the synthetic dataset (the batch starting at a given
// sample is the same whoever draws it). The methods that live inside the forward are applied here
// from outside the model: fused kernels (free-lunch) and activation checkpointing (block runner);
// the engine may wrap the block runner further (stage-3 gathering).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog/model_spec.h"
#include "models/block_runner.h"

namespace gpudays::models {
struct Batch;
}

namespace gpudays {

struct TrainableOptions {
  bool fused_kernels = false;             // fused attention / fast scan
  bool activation_checkpointing = false;  // per block
  uint64_t data_seed = 1234;
  at::Device device = at::kCPU;  // where parameters and batches live
};

// Builds the runner the blocks go through from the one the trainable uses (checkpointing, or an
// empty runner for plain calls).
using BlockRunnerWrap = std::function<models::BlockRunner(models::BlockRunner inner)>;

class Trainable {
 public:
  virtual ~Trainable() = default;
  virtual std::vector<at::Tensor> parameters() = 0;
  // The parameters' names (HuggingFace's, as the zoo's modules), in parameters() order.
  virtual std::vector<std::string> parameter_names() = 0;
  // The loss of a batch given from outside (real data; any device: moved to the trainable's).
  virtual at::Tensor batch_loss(const models::Batch& batch) = 0;
  // The batch into the device buffers loaded_loss() reads (real data: the trainer's micro-batch;
  // host tensors are copied through pinned memory without a host wait on CUDA). Returns true when
  // the buffers were made anew (the first load, a new shape): their addresses changed.
  virtual bool load_batch(const models::Batch& batch) = 0;
  // Training mode (dropout on) or evaluation mode.
  virtual void set_training(bool on) = 0;
  // The loss of the synthetic micro-batch of `count` samples starting at sample `first`; the
  // samples are drawn on the trainable's device (no host copy), the same whoever draws them.
  virtual at::Tensor micro_loss(int64_t first_sample, int64_t count) = 0;
  // The same in two parts, for CUDA graphs: the micro-batch goes into device buffers that keep
  // their addresses while its shape stays the same (load_batch's return); the loss is computed
  // from them.
  virtual bool load_micro_batch(int64_t first_sample, int64_t count) = 0;
  virtual at::Tensor loaded_loss() = 0;
  // Each block's parameters, in run order (empty for a family without a block runner).
  virtual models::BlockParameters block_parameters() = 0;
  // Throws InputError for a family without a block runner.
  virtual void wrap_block_runner(const BlockRunnerWrap& wrap) = 0;
  // Mamba: the selective scan that runs on the trainable's device (models/selective_scan.h's
  // scan_implementation, for the trial's record); "" for other families.
  virtual std::string scan_implementation() const = 0;
};

// Micro-batch i of a step is `count` samples starting at first_sample(i).
struct MicroBatches;
MicroBatches micro_batches(Trainable& trainable,
                           std::function<int64_t(int64_t)> first_sample,
                           int64_t count);

// Throws InputError for a family the engine cannot train yet, or a method it lacks.
std::unique_ptr<Trainable> make_trainable(const ModelSpec& model, const TrainableOptions& options);

}  // namespace gpudays
