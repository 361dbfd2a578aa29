// Trainable adapters over the model zoo (models/zoo.h): any family the zoo builds, on its
// synthetic batches. Activation checkpointing goes through the trunk's block runner.
#include "train/trainable.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <fmt/format.h>

#include "common/error.h"
#include "models/zoo.h"
#include "train/activation_checkpoint.h"
#include "train/engine.h"

namespace gpudays {
namespace {

models::BlockRunner checkpoint_runner() {
  return [](int64_t, const models::Block& block, const at::Tensor& hidden) {
    return checkpointed_block(block, hidden);
  };
}

class ZooTrainable final : public Trainable {
 public:
  ZooTrainable(const ModelSpec& spec, const TrainableOptions& options)
      : model_(models::make_model(spec, zoo_options(options))), spec_(spec), options_(options) {
    if (options.activation_checkpointing) {
      if (!model_.has_block_runner()) {
        throw InputError(fmt::format("activation checkpointing is not wired into {} yet",
                                     to_string(spec.family)));
      }
      inner_runner_ = checkpoint_runner();
      model_.set_block_runner(inner_runner_);
    }
  }

  std::vector<at::Tensor> parameters() override { return model_.module().parameters(); }

  std::vector<std::string> parameter_names() override {
    std::vector<std::string> names;
    for (const auto& item : model_.module().named_parameters()) names.push_back(item.key());
    return names;
  }

  at::Tensor batch_loss(const models::Batch& batch) override {
    return model_.loss(batch.to(options_.device));
  }

  void set_training(bool on) override { model_.module().train(on); }

  at::Tensor micro_loss(int64_t first, int64_t count) override {
    return model_.loss(host_batch(first, count).to(options_.device));
  }

  void load_micro_batch(int64_t first, int64_t count) override {
    const models::Batch b = host_batch(first, count);
    if (!same_shapes(b, loaded_)) {
      loaded_ = b.to(options_.device);
      return;
    }
    copy_into(loaded_.input_ids, b.input_ids);
    copy_into(loaded_.attention_mask, b.attention_mask);
    copy_into(loaded_.pixel_values, b.pixel_values);
    copy_into(loaded_.labels, b.labels);
  }

  at::Tensor loaded_loss() override { return model_.loss(loaded_); }

  models::BlockParameters block_parameters() override { return model_.block_parameters(); }

  void wrap_block_runner(const BlockRunnerWrap& wrap) override {
    model_.set_block_runner(wrap(inner_runner_));
  }

 private:
  models::Batch host_batch(int64_t first, int64_t count) const {
    models::SyntheticOptions s;
    s.batch_size = count;
    s.generator = at::make_generator<at::CPUGeneratorImpl>(options_.data_seed * 1000003ULL + first);
    return models::synthetic_batch(spec_, s);
  }

  static bool same_shapes(const models::Batch& a, const models::Batch& b) {
    const auto same = [](const at::Tensor& x, const at::Tensor& y) {
      return x.defined() == y.defined() && (!x.defined() || x.sizes() == y.sizes());
    };
    return same(a.input_ids, b.input_ids) && same(a.attention_mask, b.attention_mask) &&
           same(a.pixel_values, b.pixel_values) && same(a.labels, b.labels);
  }

  static void copy_into(at::Tensor& target, const at::Tensor& source) {
    if (target.defined()) target.copy_(source);
  }

  static models::ZooOptions zoo_options(const TrainableOptions& o) {
    models::ZooOptions z;
    z.attention = o.fused_kernels ? models::AttentionKind::kFused : models::AttentionKind::kPlain;
    z.param_options = at::TensorOptions().dtype(at::kFloat).device(o.device);
    z.scan = o.fused_kernels ? models::ScanKind::kFused : models::ScanKind::kPlain;
    return z;
  }

  models::ZooModel model_;
  ModelSpec spec_;
  TrainableOptions options_;
  models::BlockRunner inner_runner_;  // checkpointing, or empty
  models::Batch loaded_;              // on the device (load_micro_batch)
};

}  // namespace

MicroBatches micro_batches(Trainable& trainable,
                           std::function<int64_t(int64_t)> first_sample,
                           int64_t count) {
  return {[&trainable, first_sample, count](int64_t i) {
            trainable.load_micro_batch(first_sample(i), count);
          },
          [&trainable] { return trainable.loaded_loss(); }};
}

std::unique_ptr<Trainable> make_trainable(const ModelSpec& model, const TrainableOptions& options) {
  return std::make_unique<ZooTrainable>(model, options);
}

}  // namespace gpudays
