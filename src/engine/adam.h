// Adam and AdamW (Kingma and Ba 2015; Loshchilov and Hutter 2019) over fp32 parameters (the master
// weights), in two implementations that compute the same update: the plain per-parameter loop of
// tensor operations (the reference) and PyTorch's fused multi-tensor kernel (free-lunch).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "catalog/model_spec.h"

namespace gpudays {

struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled_weight_decay = true;  // AdamW; false: L2 added to the gradient (Adam)
  bool fused = false;
  bool operator==(const AdamOptions&) const = default;
};

AdamOptions adam_options(const RecipeSpec& recipe);  // the recipe's; not fused

class Adam {
 public:
  // params: fp32 tensors whose .grad() holds the gradient at step().
  Adam(std::vector<at::Tensor> params, AdamOptions options);

  void step(double lr);  // skips parameters without a gradient
  int64_t steps() const { return steps_; }
  int64_t state_bytes() const;  // both moments
  const std::vector<at::Tensor>& params() const { return params_; }
  // Checkpointing: the moments and per-parameter step counts (restored in place), and the count
  // of steps taken.
  std::vector<at::Tensor>& exp_avg() { return exp_avg_; }
  std::vector<at::Tensor>& exp_avg_sq() { return exp_avg_sq_; }
  // Every parameter's step count (equal after a checkpoint's restore), on the device and the host.
  void set_step_count(double count);
  double step_count() const;  // the first parameter's, from the host
  void set_steps(int64_t steps) { steps_ = steps; }

 private:
  void plain_step(double lr);
  void fused_step(double lr);
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> exp_avg_;
  std::vector<at::Tensor> exp_avg_sq_;
  std::vector<at::Tensor> step_counts_;  // fused kernel's per-parameter step (fp32 scalars)
  std::vector<double> host_counts_;      // the same on the host (the plain loop's)
  AdamOptions options_;
  int64_t steps_ = 0;
};

}  // namespace gpudays
