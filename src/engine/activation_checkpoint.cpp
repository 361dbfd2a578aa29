// Checkpointing as a custom autograd function (the reentrant scheme): forward under no-grad,
// backward re-runs the block under the saved RNG and autocast state and back-propagates through
// the recomputation; parameter gradients accumulate as in the plain path.
#include "engine/activation_checkpoint.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/custom_class.h>

#include <mutex>

#include "engine/autocast_scope.h"

namespace gpudays {
namespace {

// What backward needs besides the input: the block and the state the forward ran under.
struct Recompute : torch::CustomClassHolder {
  BlockFn block;
  at::Tensor rng_state;
  c10::DeviceType device_type = c10::DeviceType::CPU;
  bool autocast_enabled = false;
  at::ScalarType autocast_dtype = at::kFloat;
};

at::Tensor generator_state(at::Generator& g) {
  std::lock_guard<std::mutex> lock(g.mutex());
  return g.get_state();
}

void set_generator_state(at::Generator& g, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_state(state);
}

// Runs the block under the forward's autocast state, in a scope of its own: the casts it caches
// are cleared when it ends (the recompute runs in backward, after the forward's scope has cleared
// the cache; on CUDA on the autograd worker thread, whose cache would outlive the step).
at::Tensor run_as_recorded(const Recompute& r, const at::Tensor& x) {
  const AutocastScope autocast(r.device_type, r.autocast_enabled, r.autocast_dtype);
  return r.block(x);
}

struct CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
  // `anchor` is an empty tensor that requires grad: with it the output joins the graph even when
  // the block's input does not (the first block), so parameter gradients still flow.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx,
                            const at::Tensor& input,
                            const at::Tensor& anchor,
                            c10::intrusive_ptr<Recompute> recompute) {
    at::Generator g = at::globalContext().defaultGenerator(input.device());
    recompute->rng_state = generator_state(g);
    recompute->device_type = input.device().type();
    recompute->autocast_enabled = at::autocast::is_autocast_enabled(recompute->device_type);
    recompute->autocast_dtype = at::autocast::get_autocast_dtype(recompute->device_type);
    ctx->save_for_backward({input});
    ctx->saved_data["recompute"] = c10::IValue::make_capsule(
        c10::static_intrusive_pointer_cast<torch::CustomClassHolder>(recompute));
    at::NoGradGuard no_grad;
    return recompute->block(input);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const at::Tensor input = ctx->get_saved_variables()[0];
    auto recompute =
        c10::static_intrusive_pointer_cast<Recompute>(ctx->saved_data["recompute"].toCapsule());
    at::Generator g = at::globalContext().defaultGenerator(input.device());
    const at::Tensor current_state = generator_state(g);
    set_generator_state(g, recompute->rng_state);
    at::Tensor x = input.detach().requires_grad_(input.requires_grad());
    at::Tensor y;
    {
      at::AutoGradMode enable_grad(true);
      y = run_as_recorded(*recompute, x);
    }
    set_generator_state(g, current_state);
    torch::autograd::backward({y}, {grad_outputs[0]});
    return {x.requires_grad() ? x.grad() : at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor checkpointed_block(const BlockFn& block, const at::Tensor& input) {
  auto recompute = c10::make_intrusive<Recompute>();
  recompute->block = block;
  static const at::Tensor anchor = at::empty({0}).requires_grad_(true);
  return CheckpointFunction::apply(input, anchor, recompute);
}

}  // namespace gpudays
