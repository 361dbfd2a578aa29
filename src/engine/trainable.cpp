// Trainable adapters over the model zoo (models/zoo.h): any family the zoo builds, on its
// synthetic batches. Activation checkpointing goes through the trunk's block runner.
#include "engine/trainable.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/activation_checkpoint.h"
#include "engine/engine.h"
#include "models/selective_scan.h"
#include "models/zoo.h"

namespace gpudays {
namespace {

// A generator of `device` in the state a fresh one seeded with `seed` has (on the CPU the same
// numbers as at::make_generator<CPUGeneratorImpl>(seed)).
at::Generator seeded_generator(const at::Device& device, uint64_t seed) {
  if (device.is_cpu()) return at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Generator g = at::globalContext().defaultGenerator(device).clone();
  g.set_current_seed(seed);
  return g;
}

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
    return model_.loss(synthetic(first, count));
  }

  bool load_micro_batch(int64_t first, int64_t count) override {
    return load_batch(synthetic(first, count));
  }

  bool load_batch(const models::Batch& batch) override {
    const models::Batch b = options_.device.is_cuda() ? pinned(batch) : batch;
    if (!same_shapes(b, loaded_)) {
      loaded_ = b.to(options_.device);
      return true;
    }
    copy_into(loaded_.input_ids, b.input_ids);
    copy_into(loaded_.attention_mask, b.attention_mask);
    copy_into(loaded_.pixel_values, b.pixel_values);
    copy_into(loaded_.labels, b.labels);
    return false;
  }

  at::Tensor loaded_loss() override { return model_.loss(loaded_); }

  models::BlockParameters block_parameters() override { return model_.block_parameters(); }

  void wrap_block_runner(const BlockRunnerWrap& wrap) override {
    model_.set_block_runner(wrap(inner_runner_));
  }

  std::string scan_implementation() const override {
    if (spec_.family != Family::kMamba) return "";
    return models::scan_implementation(zoo_options(options_).scan, options_.device);
  }

 private:
  // Drawn on the device from a generator of that device seeded by the first sample.
  models::Batch synthetic(int64_t first, int64_t count) const {
    models::SyntheticOptions s;
    s.batch_size = count;
    s.device = options_.device;
    s.generator = seeded_generator(options_.device, options_.data_seed * 1000003ULL + first);
    return models::synthetic_batch(spec_, s);
  }

  // Host tensors in pinned memory, so that the copy to the GPU does not wait for the host.
  static models::Batch pinned(const models::Batch& b) {
    const auto pin = [](const at::Tensor& t) {
      return t.defined() && t.device().is_cpu() ? t.pin_memory() : t;
    };
    return {pin(b.input_ids), pin(b.attention_mask), pin(b.pixel_values), pin(b.labels)};
  }

  static bool same_shapes(const models::Batch& a, const models::Batch& b) {
    const auto same = [](const at::Tensor& x, const at::Tensor& y) {
      return x.defined() == y.defined() && (!x.defined() || x.sizes() == y.sizes());
    };
    return same(a.input_ids, b.input_ids) && same(a.attention_mask, b.attention_mask) &&
           same(a.pixel_values, b.pixel_values) && same(a.labels, b.labels);
  }

  // On CUDA the source is on the device or pinned (load_batch): the copy need not wait.
  void copy_into(at::Tensor& target, const at::Tensor& source) const {
    if (target.defined()) target.copy_(source, /*non_blocking=*/options_.device.is_cuda());
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
            return trainable.load_micro_batch(first_sample(i), count);
          },
          [&trainable] { return trainable.loaded_loss(); }};
}

std::unique_ptr<Trainable> make_trainable(const ModelSpec& model, const TrainableOptions& options) {
  return std::make_unique<ZooTrainable>(model, options);
}

}  // namespace gpudays
