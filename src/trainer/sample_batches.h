// Samples made into the zoo's batches: token samples for the causal LMs (inputs and labels, the
// loss shifting them) and, masked, for RoBERTa's masked LM; image samples for the vision models
// (pixels scaled to [-1, 1], class labels). Each checks that the data fits the model (vocabulary,
// context, image shape, classes).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "catalog/model_spec.h"
#include "data/samples.h"
#include "models/zoo.h"

namespace gpudays {

struct SampleBatches {
  int64_t num_samples = 0;
  int64_t tokens_per_sample = 1;  // images: 1 (the progress line's tok/s are then images/s)
  // The samples at these global indices as one host batch. `round` (the step for training, a fixed
  // value for evaluation) and the sample's index seed its random masking, so a sample is masked
  // the same whatever the ranks or micro-batch, and again on resume.
  std::function<models::Batch(const std::vector<int64_t>& indices, uint64_t round)> batch;
};

// Both keep a reference to `samples`. Throw InputError when the data does not fit the model.
// RoBERTa (masked LM): each sample is the model's seq_len tokens; tokens are selected with the
// recipe's mlm_probability (special ids excluded: <s> 0, <pad> 1, </s> 2, <unk> 3 and <mask> =
// vocab - 1, RoBERTa's ids), and a selected one becomes <mask> (80%), a random id (10%) or stays
// (10%), as BERT (Devlin et al. 2019, Section 3.1) and HF's DataCollatorForLanguageModeling;
// the labels are -100 except at the selected positions, so the loss is theirs alone.
SampleBatches token_batches(const ModelSpec& model,
                            const data::TokenSamples& samples,
                            uint64_t seed = 0);
SampleBatches image_batches(const ModelSpec& model, const data::ImageSamples& samples);

}  // namespace gpudays
