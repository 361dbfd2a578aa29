// Family dispatch for the zoo: each family's model, objective and synthetic inputs.
#include "models/zoo.h"

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "models/convnext.h"
#include "models/gpt_neox.h"
#include "models/llama.h"
#include "models/losses.h"
#include "models/mamba.h"
#include "models/roberta.h"
#include "models/vit.h"

namespace gpudays::models {
namespace {

// A causal LM module (GPT-NeoX, Llama) as a zoo model: token logits, the shifted loss, the
// attention switch and the block runner.
template <typename Module>
ZooModel causal_lm(Module model) {
  return ZooModel(
             model.ptr(),
             [model](const Batch& b) mutable { return model->forward(b.input_ids); },
             [](const at::Tensor& logits, const Batch& b) {
               return causal_lm_loss(logits, b.labels);
             },
             [model](AttentionKind kind) mutable { model->set_attention(kind); })
      .with_blocks({[model](BlockRunner r) mutable { model->set_block_runner(std::move(r)); },
                    [model] { return model->block_parameters(); }});
}

ZooModel make_gpt_neox(const ModelSpec& spec, const ZooOptions& options) {
  GptNeoxOptions o = gpt_neox_options(spec, options.param_options);
  o.attention = options.attention;
  return causal_lm(GptNeoxForCausalLM(o));
}

ZooModel make_llama(const ModelSpec& spec, const ZooOptions& options) {
  LlamaOptions o = llama_options(spec, options.param_options);
  o.attention = options.attention;
  return causal_lm(LlamaForCausalLM(o));
}

ZooModel make_roberta(const ModelSpec& spec, const ZooOptions& options) {
  RobertaOptions o = roberta_options(spec, options.param_options);
  o.attention = options.attention;
  RobertaForMaskedLM model(o);
  return ZooModel(
             model.ptr(),
             [model](const Batch& b) mutable {
               return model->forward(b.input_ids, b.attention_mask);
             },
             [](const at::Tensor& logits, const Batch& b) {
               return masked_lm_loss(logits, b.labels);
             },
             [model](AttentionKind kind) mutable { model->set_attention(kind); })
      .with_blocks({[model](BlockRunner r) mutable { model->set_block_runner(std::move(r)); },
                    [model] { return model->block_parameters(); }});
}

ZooModel make_vit(const ModelSpec& spec, const ZooOptions& options) {
  VitOptions o = vit_options(spec, options.param_options);
  o.attention = options.attention;
  VitForImageClassification model(o);
  return ZooModel(
             model.ptr(),
             [model](const Batch& b) mutable { return model->forward(b.pixel_values); },
             [](const at::Tensor& logits, const Batch& b) {
               return classification_loss(logits, b.labels);
             },
             [model](AttentionKind kind) mutable { model->set_attention(kind); })
      .with_blocks({[model](BlockRunner r) mutable { model->set_block_runner(std::move(r)); },
                    [model] { return model->block_parameters(); }});
}

ZooModel make_convnext(const ModelSpec& spec, const ZooOptions& options) {
  ConvnextForImageClassification model(convnext_options(spec, options.param_options));
  return ZooModel(
             model.ptr(),
             [model](const Batch& b) mutable { return model->forward(b.pixel_values); },
             [](const at::Tensor& logits, const Batch& b) {
               return classification_loss(logits, b.labels);
             },
             [](AttentionKind) {})  // no attention
      .with_blocks({[model](BlockRunner r) mutable { model->set_block_runner(std::move(r)); },
                    [model] { return model->block_parameters(); }});
}

ZooModel make_mamba(const ModelSpec& spec, const ZooOptions& options) {
  MambaOptions o = mamba_options(spec, options.param_options);
  o.scan = options.scan;
  MambaForCausalLM model(o);
  return ZooModel(
             model.ptr(),
             [model](const Batch& b) mutable { return model->forward(b.input_ids); },
             [](const at::Tensor& logits, const Batch& b) {
               return causal_lm_loss(logits, b.labels);
             },
             [](AttentionKind) {})  // no attention; the scan is model->set_scan(...)
      .with_blocks({[model](BlockRunner r) mutable { model->set_block_runner(std::move(r)); },
                    [model] { return model->block_parameters(); }});
}

at::Tensor random_ids(int64_t low, int64_t high, at::IntArrayRef shape, const SyntheticOptions& o) {
  return at::randint(
      low, high, shape, o.generator, at::TensorOptions().dtype(at::kLong).device(o.device));
}

}  // namespace

Batch Batch::to(const at::Device& device) const {
  const auto move = [&](const at::Tensor& t) { return t.defined() ? t.to(device) : t; };
  return {move(input_ids), move(attention_mask), move(pixel_values), move(labels)};
}

ZooModel::ZooModel(std::shared_ptr<torch::nn::Module> module,
                   LogitsFn logits,
                   LossFn loss,
                   AttentionFn set_attention)
    : module_(std::move(module)),
      logits_(std::move(logits)),
      loss_(std::move(loss)),
      set_attention_(std::move(set_attention)) {}

ZooModel& ZooModel::with_blocks(BlockFns blocks) {
  blocks_ = std::move(blocks);
  return *this;
}

void ZooModel::set_block_runner(BlockRunner runner) {
  if (!blocks_.set_runner) {
    throw InputError(
        "this model family has no block runner yet (activation checkpointing and "
        "stage-3 sharding need one)");
  }
  blocks_.set_runner(std::move(runner));
}

BlockParameters ZooModel::block_parameters() const {
  return blocks_.parameters ? blocks_.parameters() : BlockParameters{};
}

ZooModel make_model(const ModelSpec& spec, const ZooOptions& options) {
  switch (spec.family) {
    case Family::kGptNeox:
      return make_gpt_neox(spec, options);
    case Family::kRoberta:
      return make_roberta(spec, options);
    case Family::kVit:
      return make_vit(spec, options);
    case Family::kConvnext:
      return make_convnext(spec, options);
    case Family::kMamba:
      return make_mamba(spec, options);
    case Family::kLlama:
      return make_llama(spec, options);
    default:
      throw InputError(
          fmt::format("model '{}': family {} is not implemented yet (available: "
                      "gpt_neox, roberta, vit, convnext, mamba, llama)",
                      spec.name,
                      to_string(spec.family)));
  }
}

Batch synthetic_batch(const ModelSpec& spec, const SyntheticOptions& o) {
  const ArchSpec& a = spec.arch;
  const int64_t seq = o.seq_len > 0 ? o.seq_len : a.seq_len;
  Batch b;
  if (is_vision(spec.family)) {
    b.pixel_values = at::randn({o.batch_size, a.num_channels, a.image_size, a.image_size},
                               o.generator,
                               at::TensorOptions().device(o.device));
    b.labels = random_ids(0, a.num_labels, {o.batch_size}, o);
    return b;
  }
  if (spec.family == Family::kRoberta) {
    // Ordinary tokens only, above the special ids (<s>, <pad>, </s>, <unk>; roberta-large: 0..3)
    // and below <mask> (the last id), then the recipe's masking.
    const int64_t first_ordinary =
        std::max({a.bos_token_id, a.pad_token_id, a.eos_token_id, kRobertaUnkId}) + 1;
    const at::Tensor tokens = random_ids(first_ordinary, a.vocab_size - 1, {o.batch_size, seq}, o);
    const MlmBatch mlm = mask_tokens(tokens, roberta_mlm_options(spec), o.generator);
    b.input_ids = mlm.inputs;
    b.labels = mlm.labels;
    return b;
  }
  b.input_ids = random_ids(0, a.vocab_size, {o.batch_size, seq}, o);
  b.labels = b.input_ids;
  return b;
}

}  // namespace gpudays::models
