// Shared family checks: tiny models, fixture parity, finite differences, fixed-batch training,
// export round trip.
#include "family_test_util.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/max.h>
#include <ATen/ops/randn_like.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/safetensors.h"
#include "torch_test_util.h"

namespace gpudays::test {

using models::classification_loss;

models::GptNeoxForCausalLM tiny_gpt_neox(at::ScalarType dtype) {
  torch::manual_seed(0);
  return models::GptNeoxForCausalLM(
      models::gpt_neox_options(tiny_spec("tiny-gpt-neox"), at::TensorOptions().dtype(dtype)));
}

models::LlamaForCausalLM tiny_llama(const std::string& name, at::ScalarType dtype) {
  torch::manual_seed(0);
  return models::LlamaForCausalLM(
      models::llama_options(tiny_spec(name), at::TensorOptions().dtype(dtype)));
}

models::RobertaForMaskedLM tiny_roberta(at::ScalarType dtype) {
  torch::manual_seed(0);
  models::RobertaForMaskedLM model(
      models::roberta_options(tiny_spec("tiny-roberta"), at::TensorOptions().dtype(dtype)));
  model->eval();  // no dropout
  return model;
}

models::MambaForCausalLM tiny_mamba(at::ScalarType dtype, models::ScanKind scan) {
  torch::manual_seed(0);
  models::MambaOptions options =
      models::mamba_options(tiny_spec("tiny-mamba"), at::TensorOptions().dtype(dtype));
  options.scan = scan;
  return models::MambaForCausalLM(options);
}

models::VitForImageClassification tiny_vit(at::ScalarType dtype) {
  torch::manual_seed(0);
  return models::VitForImageClassification(
      models::vit_options(tiny_spec("tiny-vit"), at::TensorOptions().dtype(dtype)));
}

models::ConvnextOptions tiny_convnext_options(at::ScalarType dtype) {
  return models::convnext_options(tiny_spec("tiny-convnext"), at::TensorOptions().dtype(dtype));
}

models::ConvnextForImageClassification tiny_convnext(at::ScalarType dtype) {
  torch::manual_seed(0);
  return models::ConvnextForImageClassification(tiny_convnext_options(dtype));
}

ParityReport compare_with_fixture(torch::nn::Module& module,
                                  const ImageClassifier& classify,
                                  const std::string& case_name,
                                  at::DeviceType device,
                                  const IsExactlyZero& exactly_zero) {
  models::load_safetensors(module, fixture_path(case_name, "model.safetensors"));
  module.to(device);
  module.eval();  // transformers ran the reference in eval mode (no dropout)
  const models::SafetensorsReader expected(fixture_path(case_name, "expected.safetensors"));
  const at::Tensor images = expected.read("pixel_values").to(device);
  const at::Tensor labels = expected.read("labels").to(device);

  ParityReport report;
  const at::Tensor logits = classify(images);
  report.logit_diff = max_abs_diff(logits, expected.read("logits"));
  const at::Tensor loss = classification_loss(logits, labels);
  report.loss_diff = max_abs_diff(loss.reshape({1}), expected.read("loss"));
  loss.backward();
  double largest_grad = 0;
  for (const auto& [name, entry] : expected.entries()) {
    if (!name.starts_with("grad/")) continue;
    largest_grad = std::max(largest_grad, expected.read(name).abs().max().item<double>());
    ++report.reference_grads;
  }
  for (const auto& item : module.named_parameters()) {
    const at::Tensor grad = item.value().grad();
    const at::Tensor ref = expected.read("grad/" + item.key());
    if (exactly_zero && exactly_zero(item.key())) {
      const double noise = std::max(max_abs_diff(grad, at::zeros_like(grad)),
                                    max_abs_diff(ref, at::zeros_like(ref)));
      report.worst_zero_grad = std::max(report.worst_zero_grad, noise / largest_grad);
    } else if (const double diff = max_rel_diff(grad, ref); diff >= report.worst_grad) {
      report.worst_grad = diff;
      report.worst_grad_name = item.key();
    }
    ++report.checked;
  }
  return report;
}

std::vector<FiniteDifference> finite_differences(torch::nn::Module& module,
                                                 const std::function<at::Tensor()>& loss,
                                                 double h) {
  for (at::Tensor& p : module.parameters()) p.mutable_grad() = at::Tensor();
  loss().backward();
  std::vector<FiniteDifference> result;
  for (const auto& item : module.named_parameters()) {
    at::Tensor p = item.value();
    const at::Tensor v = at::randn_like(p);
    FiniteDifference d{.name = item.key(), .analytic = (p.grad() * v).sum().item<double>()};
    {
      at::NoGradGuard no_grad;
      p.add_(v, h);
      const double up = loss().item<double>();
      p.add_(v, -2 * h);
      const double down = loss().item<double>();
      p.add_(v, h);
      d.numeric = (up - down) / (2 * h);
    }
    d.error = std::abs(d.numeric - d.analytic) / std::max(1.0, std::abs(d.analytic));
    result.push_back(d);
  }
  return result;
}

std::pair<double, double> train_fixed_batch(torch::nn::Module& module,
                                            const std::function<at::Tensor()>& loss,
                                            int steps,
                                            double lr,
                                            FixedBatchOptimizer optimizer_kind) {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (optimizer_kind == FixedBatchOptimizer::kAdam) {
    optimizer =
        std::make_unique<torch::optim::Adam>(module.parameters(), torch::optim::AdamOptions(lr));
  } else {
    optimizer = std::make_unique<torch::optim::AdamW>(
        module.parameters(), torch::optim::AdamWOptions(lr).weight_decay(0.0));
  }
  double first = 0;
  double last = 0;
  for (int step = 0; step < steps; ++step) {
    optimizer->zero_grad();
    const at::Tensor value = loss();
    value.backward();
    optimizer->step();
    (step == 0 ? first : last) = value.item<double>();
  }
  return {first, last};
}

bool transformers_loads(const std::string& dir, double tolerance, std::string* command) {
  // TMPDIR: what Python leaves in its temporary folder (torch's inductor cache) goes with this
  // process's scratch directory.
  const std::string line =
      fmt::format("TMPDIR='{}' '{}' '{}/tests/models/check_hf_load.py' '{}' {}",
                  scratch_dir("python-tmp"),
                  ref_python(),
                  source_dir(),
                  dir,
                  tolerance);
  if (command != nullptr) *command = line;
  return std::system(line.c_str()) == 0;
}

bool loads_in_transformers(torch::nn::Module& module,
                           const ImageClassifier& classify,
                           const ModelSpec& spec,
                           const at::Tensor& images,
                           double tolerance) {
  module.eval();
  const std::string dir = scratch_dir("hf-export-" + spec.name);
  models::save_pretrained(module, spec, dir);
  at::Tensor logits;
  {
    at::NoGradGuard no_grad;
    logits = classify(images);
  }
  models::write_safetensors(dir + "/expected.safetensors",
                            {{"pixel_values", images}, {"logits", logits}});
  return transformers_loads(dir, tolerance);
}

}  // namespace gpudays::test
