// Pieces shared by the per-family model tests: the tiny models of tests/models/data, error capture,
// parity with a transformers fixture (logits, loss, every gradient), directional finite
// differences, training on a fixed batch, and the check that transformers loads what we save.
// Thresholds stay in the tests; the checks common to every family are in family_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog/model_spec.h"
#include "models/convnext.h"
#include "models/gpt_neox.h"
#include "models/llama.h"
#include "models/mamba.h"
#include "models/roberta.h"
#include "models/vit.h"

namespace gpudays::test {

// The tiny models of tests/models/data, built after torch::manual_seed(0), with their recipe's
// options. RoBERTa's is in eval mode (no dropout); the others are in training mode.
models::GptNeoxForCausalLM tiny_gpt_neox(at::ScalarType dtype = at::kFloat);
// The llama family's: tiny-llama (grouped-query), tiny-qwen2 (q/k/v biases, one key/value head,
// tied), tiny-olmo (parameter-free LayerNorm, tied).
models::LlamaForCausalLM tiny_llama(const std::string& name = "tiny-llama",
                                    at::ScalarType dtype = at::kFloat);
models::RobertaForMaskedLM tiny_roberta(at::ScalarType dtype = at::kFloat);
models::MambaForCausalLM tiny_mamba(at::ScalarType dtype = at::kFloat,
                                    models::ScanKind scan = models::ScanKind::kPlain);
models::VitForImageClassification tiny_vit(at::ScalarType dtype = at::kFloat);
models::ConvnextOptions tiny_convnext_options(at::ScalarType dtype = at::kFloat);
models::ConvnextForImageClassification tiny_convnext(at::ScalarType dtype = at::kFloat);

// The message of the E that f throws, or "(no error)"; other exceptions pass through.
template <typename E = std::exception, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

// Names a value-parameterised test by its case's `label` (letters, digits and underscores).
inline constexpr auto case_label = [](const auto& info) { return info.param.label; };

// images: [B, C, H, W] float -> logits: [B, num_labels]
using ImageClassifier = std::function<at::Tensor(const at::Tensor& images)>;

// model->forward as an ImageClassifier (a Vit/ConvnextForImageClassification holder).
template <typename Model>
ImageClassifier classifier_of(Model model) {
  return [model = model.ptr()](const at::Tensor& images) { return model->forward(images); };
}

// A tiny image classifier, type-erased: the module and its forward.
struct ImageModel {
  std::shared_ptr<torch::nn::Module> module;
  ImageClassifier classify;
};

template <typename Model>
ImageModel image_model(Model model) {
  return {model.ptr(), classifier_of(model)};
}

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

// One parameter tensor p and a random direction v: numeric = (L(p + hv) - L(p - hv)) / 2h,
// analytic = <dL/dp, v>, error = |numeric - analytic| / max(1, |analytic|).
struct FiniteDifference {
  std::string name;
  double numeric = 0;
  double analytic = 0;
  double error = 0;
};

// Every parameter tensor of `module`, in order, one random direction each (drawn from the global
// generator). Run it in fp64 (central differences: error O(h^2)).
std::vector<FiniteDifference> finite_differences(torch::nn::Module& module,
                                                 const std::function<at::Tensor()>& loss,
                                                 double h);

enum class FixedBatchOptimizer { kAdam, kAdamWithoutWeightDecay };

// `steps` optimizer steps on the same batch: {first loss, last loss}.
std::pair<double, double> train_fixed_batch(torch::nn::Module& module,
                                            const std::function<at::Tensor()>& loss,
                                            int steps,
                                            double lr,
                                            FixedBatchOptimizer optimizer);

// tests/models/check_hf_load.py in the reference environment: loads `dir` (save_pretrained's
// output plus an expected.safetensors of inputs and logits) with transformers and compares the
// logits; true when within `tolerance`. `command` receives the command line.
bool transformers_loads(const std::string& dir, double tolerance, std::string* command = nullptr);

// Saves `module` with save_pretrained(spec), then transformers_loads compares its logits on
// `images` with ours; true when within `tolerance`.
bool loads_in_transformers(torch::nn::Module& module,
                           const ImageClassifier& classify,
                           const ModelSpec& spec,
                           const at::Tensor& images,
                           double tolerance);

}  // namespace gpudays::test
