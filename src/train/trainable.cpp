// Trainable adapters over the model zoo (models/zoo.h): any family the zoo builds, on its
// synthetic batches. Activation checkpointing goes through a trunk's block runner, which GPT-NeoX
// has so far; other families refuse it with a clear error.
#include "train/trainable.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <fmt/format.h>

#include "common/error.h"
#include "models/gpt_neox.h"
#include "models/zoo.h"
#include "train/activation_checkpoint.h"

namespace gpudays {
namespace {

models::BlockRunner checkpoint_runner() {
  return [](const models::Block& block, const at::Tensor& hidden) {
    return checkpointed_block(block, hidden);
  };
}

void install_checkpointing(const ModelSpec& spec, models::ZooModel& model) {
  auto gpt_neox = std::dynamic_pointer_cast<models::GptNeoxForCausalLMImpl>(model.module_ptr());
  if (gpt_neox == nullptr) {
    throw InputError(fmt::format("activation checkpointing is not wired into {} yet (gpt_neox "
                                 "only so far)", to_string(spec.family)));
  }
  gpt_neox->set_block_runner(checkpoint_runner());
}

class ZooTrainable final : public Trainable {
 public:
  ZooTrainable(const ModelSpec& spec, const TrainableOptions& options)
      : model_(models::make_model(spec, zoo_options(options))), spec_(spec), options_(options) {
    if (options.activation_checkpointing) install_checkpointing(spec_, model_);
  }

  std::vector<at::Tensor> parameters() override { return model_.module().parameters(); }

  at::Tensor micro_loss(int64_t first, int64_t count) override {
    models::SyntheticOptions s;
    s.batch_size = count;
    s.generator = at::make_generator<at::CPUGeneratorImpl>(options_.data_seed * 1000003ULL + first);
    return model_.loss(models::synthetic_batch(spec_, s));
  }

 private:
  static models::ZooOptions zoo_options(const TrainableOptions& o) {
    models::ZooOptions z;
    z.attention = o.fused_kernels ? models::AttentionKind::kFused : models::AttentionKind::kPlain;
    z.param_options = at::TensorOptions().dtype(at::kFloat);
    z.scan = o.fused_kernels ? models::ScanKind::kFused : models::ScanKind::kPlain;
    return z;
  }

  models::ZooModel model_;
  ModelSpec spec_;
  TrainableOptions options_;
};

}  // namespace

std::unique_ptr<Trainable> make_trainable(const ModelSpec& model, const TrainableOptions& options) {
  return std::make_unique<ZooTrainable>(model, options);
}

}  // namespace gpudays
