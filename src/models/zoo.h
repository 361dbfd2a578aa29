// The model zoo: builds any catalog model (one file per family) behind one small interface, so
// that the benchmark and the trainer drive every family alike; and the synthetic batches (random
// tokens, random images with labels) the reference benchmarks with.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <optional>

#include "catalog/model_spec.h"
#include "models/attention.h"
#include "models/block_runner.h"
#include "models/selective_scan.h"

namespace gpudays::models {

// One step's inputs, for any family; unused fields stay undefined.
struct Batch {
  at::Tensor input_ids;       // [B, T] int64: gpt_neox, roberta, mamba, llama
  at::Tensor attention_mask;  // [B, T]: roberta (1 token, 0 padding; undefined: no padding)
  at::Tensor pixel_values;    // [B, C, H, W]: vit, convnext
  at::Tensor labels;          // causal LMs: [B, T] = input_ids (shifted inside the loss);
                              // roberta: [B, T], -100 where not masked; vision: [B] class ids
  Batch to(const at::Device& device) const;
};

struct ZooOptions {
  AttentionKind attention = AttentionKind::kPlain;  // transformer families
  at::TensorOptions param_options;                  // device and dtype (meta: no allocation)
  ScanKind scan = ScanKind::kPlain;                 // mamba's selective scan
};

class ZooModel {
 public:
  using LogitsFn = std::function<at::Tensor(const Batch&)>;
  using LossFn = std::function<at::Tensor(const at::Tensor& logits, const Batch&)>;
  using AttentionFn = std::function<void(AttentionKind)>;
  ZooModel(std::shared_ptr<torch::nn::Module> module,
           LogitsFn logits,
           LossFn loss,
           AttentionFn set_attention);

  torch::nn::Module& module() { return *module_; }
  std::shared_ptr<torch::nn::Module> module_ptr() const { return module_; }
  // text: logits [B, T, V]; vision: logits [B, num_labels]
  at::Tensor logits(const Batch& batch) { return logits_(batch); }
  at::Tensor loss(const at::Tensor& logits, const Batch& batch) { return loss_(logits, batch); }
  at::Tensor loss(const Batch& batch) { return loss_(logits_(batch), batch); }  // scalar
  void set_attention(AttentionKind kind) { set_attention_(kind); }

  // The trunk's repeated blocks, for methods applied per block (activation checkpointing, stage-3
  // gathering). Families without them throw InputError from set_block_runner.
  struct BlockFns {
    std::function<void(BlockRunner)> set_runner;
    std::function<BlockParameters()> parameters;
  };
  ZooModel& with_blocks(BlockFns blocks);
  bool has_block_runner() const { return static_cast<bool>(blocks_.set_runner); }
  void set_block_runner(BlockRunner runner);
  BlockParameters block_parameters() const;

 private:
  std::shared_ptr<torch::nn::Module> module_;
  LogitsFn logits_;
  LossFn loss_;
  AttentionFn set_attention_;
  BlockFns blocks_;
};

// Throws InputError naming the family when it has no implementation yet.
ZooModel make_model(const ModelSpec& spec, const ZooOptions& options);

struct SyntheticOptions {
  int64_t batch_size = 1;
  int64_t seq_len = 0;                     // tokens per sample; 0: the spec's seq_len
  at::Device device = at::kCPU;            // where the batch is drawn
  std::optional<at::Generator> generator;  // of that device; none: the device's default
};

// Random tokens (roberta: masked as its recipe) or random images with random labels.
Batch synthetic_batch(const ModelSpec& spec, const SyntheticOptions& options);

}  // namespace gpudays::models
