// Trainable adapters per family. gpt_neox first; the other families join as the zoo grows.
#include "train/trainable.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <fmt/format.h>

#include "common/error.h"
#include "models/gpt_neox.h"
#include "models/losses.h"
#include "train/activation_checkpoint.h"

namespace gpudays {
namespace {

models::BlockRunner checkpoint_runner() {
  return [](const models::Block& block, const at::Tensor& hidden) {
    return checkpointed_block(block, hidden);
  };
}

class GptNeoxTrainable final : public Trainable {
 public:
  GptNeoxTrainable(const ModelSpec& spec, const TrainableOptions& options)
      : model_(models::gpt_neox_options(spec, at::TensorOptions().dtype(at::kFloat))),
        spec_(spec),
        options_(options) {
    model_->set_attention(options.fused_kernels ? models::AttentionKind::kFused
                                                : models::AttentionKind::kPlain);
    if (options.activation_checkpointing) model_->set_block_runner(checkpoint_runner());
  }

  std::vector<at::Tensor> parameters() override { return model_->parameters(); }

  at::Tensor micro_loss(int64_t first, int64_t count) override {
    const at::Tensor tokens = synthetic_tokens(first, count, spec_.arch.seq_len,
                                               spec_.arch.vocab_size, options_.data_seed);
    return models::causal_lm_loss(model_->forward(tokens), tokens);
  }

 private:
  models::GptNeoxForCausalLM model_;
  ModelSpec spec_;
  TrainableOptions options_;
};

}  // namespace

at::Tensor synthetic_tokens(int64_t first, int64_t count, int64_t seq_len, int64_t vocab,
                            uint64_t seed) {
  std::vector<at::Tensor> rows;
  for (int64_t i = first; i < first + count; ++i) {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(seed * 1000003ULL + i);
    rows.push_back(at::randint(vocab, {seq_len}, g, at::TensorOptions().dtype(at::kLong)));
  }
  return at::stack(rows);
}

std::unique_ptr<Trainable> make_trainable(const ModelSpec& model, const TrainableOptions& options) {
  if (model.family == Family::kGptNeox) return std::make_unique<GptNeoxTrainable>(model, options);
  throw InputError(fmt::format("the engine cannot train family {} yet (gpt_neox only so far)",
                               to_string(model.family)));
}

}  // namespace gpudays
