// Checks shared by the vision model tests (vit_test.cpp, convnext_test.cpp): parity with a
// transformers fixture (logits, loss, every gradient), directional finite differences, training
// on a fixed batch, and a checkpoint round trip through transformers. Thresholds stay in the tests.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <functional>
#include <string>
#include <utility>

#include "catalog/model_spec.h"

namespace gpudays::test {

// images: [B, C, H, W] float -> logits: [B, num_labels]
using ImageClassifier = std::function<at::Tensor(const at::Tensor& images)>;

struct ParityReport {
  double logit_diff = 0;  // max |logits - ref|
  double loss_diff = 0;   // |loss - ref|
  double worst_grad = 0;  // max over parameter tensors of max |g - ref| / max |ref|
  std::string worst_grad_name;
  // Over the tensors whose exact gradient is zero: max(|g|, |ref|) / the largest reference
  // gradient entry of the whole model. Both sides are rounding noise there, so a ratio to the
  // tensor's own scale would mean nothing.
  double worst_zero_grad = 0;
  size_t checked = 0;          // parameter tensors compared
  size_t reference_grads = 0;  // "grad/..." tensors in the fixture
};

// Names the parameters whose gradient is zero in exact arithmetic.
using IsExactlyZero = std::function<bool(const std::string& name)>;

// Loads fixtures/<case>/model.safetensors (HF names, all-or-nothing) into `module`, moves it to
// `device`, runs the fixture's batch forward and backward, and compares with expected.safetensors.
ParityReport compare_with_fixture(torch::nn::Module& module,
                                  const ImageClassifier& classify,
                                  const std::string& case_name,
                                  at::DeviceType device,
                                  const IsExactlyZero& exactly_zero = nullptr);

// For each parameter tensor p and a random direction v: |(L(p + hv) - L(p - hv)) / 2h - <dL/dp, v>|
// / max(1, |<dL/dp, v>|); returns the worst, and the parameter's name. Run it in fp64, eval mode.
std::pair<double, std::string> worst_finite_difference_error(
    torch::nn::Module& module, const std::function<at::Tensor()>& loss, double h);

// Adam on the same batch for `steps` steps: {first loss, last loss}.
std::pair<double, double> train_fixed_batch(torch::nn::Module& module,
                                            const std::function<at::Tensor()>& loss,
                                            int steps,
                                            double lr);

// Saves `module` with save_pretrained(spec), then tests/models/check_hf_load.py loads it with
// transformers and compares its logits on `images` with ours; true when within `tolerance`.
bool loads_in_transformers(torch::nn::Module& module,
                           const ImageClassifier& classify,
                           const ModelSpec& spec,
                           const at::Tensor& images,
                           double tolerance);

}  // namespace gpudays::test
