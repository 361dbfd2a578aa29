// Shared vision checks: fixture parity, finite differences, fixed-batch training, export round
// trip.
#include "vision_test_util.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/max.h>
#include <ATen/ops/randn_like.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/safetensors.h"
#include "torch_test_util.h"

namespace gpudays::test {

using models::classification_loss;

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

std::pair<double, std::string> worst_finite_difference_error(
    torch::nn::Module& module, const std::function<at::Tensor()>& loss, double h) {
  for (at::Tensor& p : module.parameters()) p.mutable_grad() = at::Tensor();
  loss().backward();
  std::pair<double, std::string> worst = {0.0, ""};
  for (const auto& item : module.named_parameters()) {
    at::Tensor p = item.value();
    const at::Tensor v = at::randn_like(p);
    const double analytic = (p.grad() * v).sum().item<double>();
    double numeric = 0;
    {
      at::NoGradGuard no_grad;
      p.add_(v, h);
      const double up = loss().item<double>();
      p.add_(v, -2 * h);
      const double down = loss().item<double>();
      p.add_(v, h);
      numeric = (up - down) / (2 * h);
    }
    const double error = std::abs(numeric - analytic) / std::max(1.0, std::abs(analytic));
    if (error >= worst.first) worst = {error, item.key()};
  }
  return worst;
}

std::pair<double, double> train_fixed_batch(torch::nn::Module& module,
                                            const std::function<at::Tensor()>& loss,
                                            int steps,
                                            double lr) {
  torch::optim::Adam optimizer(module.parameters(), torch::optim::AdamOptions(lr));
  double first = 0;
  double last = 0;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    const at::Tensor value = loss();
    value.backward();
    optimizer.step();
    (step == 0 ? first : last) = value.item<double>();
  }
  return {first, last};
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
  const std::string command = fmt::format("'{}' '{}/tests/models/check_hf_load.py' '{}' {}",
                                          ref_python(),
                                          source_dir(),
                                          dir,
                                          tolerance);
  return std::system(command.c_str()) == 0;
}

}  // namespace gpudays::test
