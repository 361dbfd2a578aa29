// Token and image batches for the trainer.
#include "trainer/sample_batches.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <optional>

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "common/error.h"
#include "models/roberta.h"

namespace gpudays {

namespace {

// A 64-bit mix of the run's seed, the round and a sample index (splitmix64's finaliser).
uint64_t sample_seed(uint64_t seed, uint64_t round, int64_t index) {
  uint64_t z = seed ^ (round * 0x9E3779B97F4A7C15ull) ^
               (static_cast<uint64_t>(index) * 0xD1B54A32D192ED03ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

SampleBatches token_batches(const ModelSpec& model,
                            const data::TokenSamples& samples,
                            uint64_t seed) {
  const FamilyTraits& family = family_traits(model.family);
  const bool masked_lm = family.objective == Objective::kMaskedLm;
  if (family.modality != Modality::kText) {
    throw InputError(
        fmt::format("{} does not train on token data here (causal LMs do: gpt_neox, "
                    "mamba, llama; and roberta, masked)",
                    to_string(model.family)));
  }
  if (samples.sample_tokens() != model.arch.seq_len) {
    throw InputError(fmt::format(
        "samples of {} tokens for a context of {}", samples.sample_tokens(), model.arch.seq_len));
  }
  const int64_t vocab = model.arch.vocab_size;
  const int64_t tokens = samples.sample_tokens();
  std::optional<models::MlmOptions> mlm;
  if (masked_lm) mlm = models::roberta_mlm_options(model);
  return {
      samples.num_samples(),
      tokens,
      [&samples, vocab, tokens, mlm, seed](const std::vector<int64_t>& ix, uint64_t round) {
        // ids: [count, seq_len] int64; causal LMs: labels are the ids (the loss shifts them)
        at::Tensor ids = at::empty({static_cast<int64_t>(ix.size()), tokens}, at::kLong);
        for (size_t i = 0; i < ix.size(); ++i) {
          samples.read_sample(ix[i], ids.data_ptr<int64_t>() + static_cast<int64_t>(i) * tokens);
        }
        if (ids.max().item<int64_t>() >= vocab || ids.min().item<int64_t>() < 0) {
          throw InputError(
              fmt::format("the data has token ids outside the model's vocabulary of {}", vocab));
        }
        models::Batch b;
        b.input_ids = ids;
        b.labels = ids;
        if (!mlm) return b;
        // Masked LM: each sample masked by its own generator (seed, round, index).
        b.input_ids = at::empty_like(ids);
        b.labels = at::empty_like(ids);
        for (size_t i = 0; i < ix.size(); ++i) {
          const int64_t row = static_cast<int64_t>(i);
          const models::MlmBatch m = models::mask_tokens(
              ids.narrow(0, row, 1),
              *mlm,
              at::make_generator<at::CPUGeneratorImpl>(sample_seed(seed, round, ix[i])));
          b.input_ids.narrow(0, row, 1).copy_(m.inputs);
          b.labels.narrow(0, row, 1).copy_(m.labels);
        }
        return b;
      }};
}

SampleBatches image_batches(const ModelSpec& model, const data::ImageSamples& samples) {
  const ArchSpec& a = model.arch;
  if (!is_vision(model.family)) {
    throw InputError(fmt::format("{} does not train on images", to_string(model.family)));
  }
  if (samples.channels() != a.num_channels || samples.height() != a.image_size ||
      samples.width() != a.image_size || samples.num_classes() > a.num_labels) {
    throw InputError(fmt::format("images of {}x{}x{} in {} classes for a model of {}x{}x{} in {}",
                                 samples.channels(),
                                 samples.height(),
                                 samples.width(),
                                 samples.num_classes(),
                                 a.num_channels,
                                 a.image_size,
                                 a.image_size,
                                 a.num_labels));
  }
  return {samples.num_samples(), 1, [&samples, a](const std::vector<int64_t>& ix, uint64_t) {
            // pixels: [count, C, H, W] float in [-1, 1]; labels: [count] int64
            const int64_t count = static_cast<int64_t>(ix.size());
            const int64_t pixels = a.num_channels * a.image_size * a.image_size;
            at::Tensor raw = at::empty({count, pixels}, at::kByte);
            at::Tensor labels = at::empty({count}, at::kLong);
            for (int64_t i = 0; i < count; ++i) {
              labels[i] = samples.read_sample(ix[static_cast<size_t>(i)],
                                              raw.data_ptr<uint8_t>() + i * pixels);
            }
            models::Batch b;
            b.pixel_values = (raw.to(at::kFloat) / 127.5 - 1.0)
                                 .view({count, a.num_channels, a.image_size, a.image_size});
            b.labels = labels;
            return b;
          }};
}

}  // namespace gpudays
