// apply_methods: configuration -> trainable and engine options.
#include "engine/apply_methods.h"

#include "common/error.h"

namespace gpudays {

MethodOptions apply_methods(const Configuration& config,
                            const RecipeSpec& recipe,
                            at::Device device,
                            uint64_t data_seed) {
  if (config.micro_batch_size < 1 || config.grad_acc_steps < 1) {
    throw InputError("micro-batch and accumulation must be at least 1");
  }
  const MethodSet& m = config.methods;
  MethodOptions out;
  out.trainable.fused_kernels = m.free_lunch;
  out.trainable.activation_checkpointing = m.activation_checkpointing;
  out.trainable.data_seed = data_seed;
  out.trainable.device = device;

  EngineOptions& e = out.engine;
  e.precision = recipe.precision;
  e.grad_acc_steps = config.grad_acc_steps;
  e.sharding = m.sharding;
  e.offload = m.offloading;
  e.clip_grad_norm = recipe.clip_grad_norm;
  e.adam = adam_options(recipe);
  e.adam.fused = m.free_lunch;
  e.schedule = schedule_options(recipe);
  e.tf32 = m.free_lunch;
  e.cuda_graphs = m.free_lunch && !m.activation_checkpointing;
  return out;
}

}  // namespace gpudays
