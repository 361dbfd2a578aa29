// Samples made into the zoo's batches: token samples for the causal LMs (inputs and labels, the
// loss shifting them), image samples for the vision models (pixels scaled to [-1, 1], class
// labels). Each checks that the data fits the model (vocabulary, context, image shape, classes).
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
  // The samples at these global indices as one host batch.
  std::function<models::Batch(const std::vector<int64_t>& indices)> batch;
};

// Both keep a reference to `samples`. Throw InputError when the data does not fit the model.
SampleBatches token_batches(const ModelSpec& model, const data::TokenSamples& samples);
SampleBatches image_batches(const ModelSpec& model, const data::ImageSamples& samples);

}  // namespace gpudays
