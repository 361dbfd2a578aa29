// apply_methods is the one place a method is switched on: each method of a configuration turns on
// exactly its own options, and the recipe's settings pass through unchanged.
#include <gtest/gtest.h>

#include "catalog/model_loader.h"
#include "common/error.h"
#include "train/apply_methods.h"

namespace gpudays {
namespace {

RecipeSpec recipe() {
  return load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml").recipe;
}

TEST(ApplyMethods, PlainConfigurationSwitchesNothingOn) {
  const MethodOptions o = apply_methods(Configuration{MethodSet{}, 2, 4}, recipe(), at::kCPU);
  EXPECT_FALSE(o.trainable.fused_kernels);
  EXPECT_FALSE(o.trainable.activation_checkpointing);
  EXPECT_EQ(o.engine.sharding, Sharding::kNone);
  EXPECT_FALSE(o.engine.offload);
  EXPECT_FALSE(o.engine.adam.fused);
  EXPECT_FALSE(o.engine.tf32);
  EXPECT_FALSE(o.engine.cuda_graphs);
  EXPECT_EQ(o.engine.grad_acc_steps, 4);
  EXPECT_EQ(o.trainable.device, at::Device(at::kCPU));
}

TEST(ApplyMethods, FreeLunchTurnsOnKernelsFusedAdamTf32AndGraphs) {
  const MethodOptions o =
      apply_methods(Configuration{MethodSet{.free_lunch = true}, 2, 4}, recipe(), at::kCPU);
  EXPECT_TRUE(o.trainable.fused_kernels);
  EXPECT_TRUE(o.engine.adam.fused);
  EXPECT_TRUE(o.engine.tf32);
  EXPECT_TRUE(o.engine.cuda_graphs);
  EXPECT_FALSE(o.trainable.activation_checkpointing);
}

// A graph cannot hold the recomputation's hooks: checkpointing leaves the micro-step eager.
TEST(ApplyMethods, CheckpointingGoesToTheTrainableAndKeepsGraphsOff) {
  const MethodOptions o = apply_methods(
      Configuration{MethodSet{.free_lunch = true, .activation_checkpointing = true}, 2, 4},
      recipe(),
      at::kCPU);
  EXPECT_TRUE(o.trainable.activation_checkpointing);
  EXPECT_FALSE(o.engine.cuda_graphs);
  EXPECT_TRUE(o.engine.adam.fused);
}

TEST(ApplyMethods, ShardingAndOffloadingGoToTheEngine) {
  for (Sharding s : all_shardings()) {
    for (bool offload : {false, true}) {
      const MethodOptions o = apply_methods(
          Configuration{MethodSet{.sharding = s, .offloading = offload}, 1, 1}, recipe(), at::kCPU);
      EXPECT_EQ(o.engine.sharding, s);
      EXPECT_EQ(o.engine.offload, offload);
      EXPECT_FALSE(o.trainable.fused_kernels);
    }
  }
}

TEST(ApplyMethods, RecipeSettingsPassThrough) {
  const RecipeSpec r = recipe();
  const MethodOptions o = apply_methods(Configuration{MethodSet{}, 1, 1}, r, at::kCPU, 77);
  EXPECT_EQ(o.engine.precision, r.precision);
  EXPECT_DOUBLE_EQ(o.engine.clip_grad_norm, r.clip_grad_norm);
  EXPECT_DOUBLE_EQ(o.engine.adam.beta2, r.beta2);
  EXPECT_DOUBLE_EQ(o.engine.adam.weight_decay, r.weight_decay);
  EXPECT_EQ(o.trainable.data_seed, 77u);
}

TEST(ApplyMethods, RejectsEmptyBatches) {
  EXPECT_THROW(apply_methods(Configuration{MethodSet{}, 0, 1}, recipe(), at::kCPU), InputError);
  EXPECT_THROW(apply_methods(Configuration{MethodSet{}, 1, 0}, recipe(), at::kCPU), InputError);
}

}  // namespace
}  // namespace gpudays
