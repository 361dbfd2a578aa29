// Token and image batches for the trainer.
#include "trainer/sample_batches.h"

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

SampleBatches token_batches(const ModelSpec& model, const data::TokenSamples& samples) {
  if (model.family != Family::kGptNeox && model.family != Family::kMamba) {
    throw InputError(
        fmt::format("{} does not train on token data here (causal LMs do: gpt_neox, "
                    "mamba)",
                    to_string(model.family)));
  }
  if (samples.sample_tokens() != model.arch.seq_len) {
    throw InputError(fmt::format(
        "samples of {} tokens for a context of {}", samples.sample_tokens(), model.arch.seq_len));
  }
  const int64_t vocab = model.arch.vocab_size;
  const int64_t tokens = samples.sample_tokens();
  return {
      samples.num_samples(), tokens, [&samples, vocab, tokens](const std::vector<int64_t>& ix) {
        // ids: [count, seq_len] int64; labels are the ids (causal_lm_loss shifts them)
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
        return b;
      }};
}

SampleBatches image_batches(const ModelSpec& model, const data::ImageSamples& samples) {
  const ArchSpec& a = model.arch;
  if (model.family != Family::kVit && model.family != Family::kConvnext) {
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
  return {samples.num_samples(), 1, [&samples, a](const std::vector<int64_t>& ix) {
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
