// Adam: the reference loop and the fused kernel.
#include "engine/adam.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

namespace gpudays {

AdamOptions adam_options(const RecipeSpec& recipe) {
  AdamOptions o;
  o.beta1 = recipe.beta1;
  o.beta2 = recipe.beta2;
  o.eps = recipe.eps;
  o.weight_decay = recipe.weight_decay;
  o.decoupled_weight_decay = recipe.optimizer == OptimizerKind::kAdamW;
  return o;
}

Adam::Adam(std::vector<at::Tensor> params, AdamOptions options)
    : params_(std::move(params)), options_(options) {
  for (const at::Tensor& p : params_) {
    exp_avg_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    exp_avg_sq_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    step_counts_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    host_counts_.push_back(0.0);
  }
}

void Adam::set_step_count(double count) {
  for (at::Tensor& t : step_counts_) t.fill_(count);
  for (double& c : host_counts_) c = count;
}

double Adam::step_count() const {
  return host_counts_.empty() ? 0.0 : host_counts_.front();
}

int64_t Adam::state_bytes() const {
  int64_t bytes = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    bytes += exp_avg_[i].nbytes() + exp_avg_sq_[i].nbytes();
  }
  return bytes;
}

void Adam::step(double lr) {
  ++steps_;
  if (options_.fused) {
    fused_step(lr);
  } else {
    plain_step(lr);
  }
}

// The textbook update, one parameter at a time (torch.optim.Adam's single-tensor path).
void Adam::plain_step(double lr) {
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    // This parameter's step, counted on the host (a read of the device's count would wait for
    // the device once per parameter); the device's count follows for the fused kernel's sake.
    const double t = ++host_counts_[i];
    step_counts_[i].add_(1);
    const double bias1 = 1.0 - std::pow(options_.beta1, t);
    const double bias2 = 1.0 - std::pow(options_.beta2, t);
    at::Tensor grad = p.grad();
    if (options_.weight_decay != 0.0) {
      if (options_.decoupled_weight_decay) {
        p.mul_(1.0 - lr * options_.weight_decay);
      } else {
        grad = grad.add(p, options_.weight_decay);
      }
    }
    exp_avg_[i].lerp_(grad, 1.0 - options_.beta1);
    exp_avg_sq_[i].mul_(options_.beta2).addcmul_(grad, grad, 1.0 - options_.beta2);
    const at::Tensor denom = (exp_avg_sq_[i].sqrt() / std::sqrt(bias2)).add_(options_.eps);
    p.addcdiv_(exp_avg_[i], denom, -lr / bias1);
  }
}

void Adam::fused_step(double lr) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> params, grads, avgs, avg_sqs, counts;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].grad().defined()) continue;
    params.push_back(params_[i]);
    grads.push_back(params_[i].grad());
    avgs.push_back(exp_avg_[i]);
    avg_sqs.push_back(exp_avg_sq_[i]);
    counts.push_back(step_counts_[i]);
  }
  if (params.empty()) return;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].grad().defined()) ++host_counts_[i];
  }
  at::_foreach_add_(counts, 1);
  const auto& o = options_;
  if (o.decoupled_weight_decay) {
    at::_fused_adamw_(params,
                      grads,
                      avgs,
                      avg_sqs,
                      /*max_exp_avg_sqs=*/{},
                      counts,
                      lr,
                      o.beta1,
                      o.beta2,
                      o.weight_decay,
                      o.eps,
                      /*amsgrad=*/false,
                      /*maximize=*/false);
  } else {
    at::_fused_adam_(params,
                     grads,
                     avgs,
                     avg_sqs,
                     /*max_exp_avg_sqs=*/{},
                     counts,
                     lr,
                     o.beta1,
                     o.beta2,
                     o.weight_decay,
                     o.eps,
                     /*amsgrad=*/false,
                     /*maximize=*/false);
  }
}

}  // namespace gpudays
