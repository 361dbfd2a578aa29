// apply_methods is the one place a method is switched on: each method of a configuration turns on
// exactly its own options, and the recipe's settings pass through unchanged.
#include <gtest/gtest.h>

#include <fstream>

#include "../models/torch_test_util.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "engine/apply_methods.h"
#include "exports/export.h"
#include "trainer/run_file.h"
#include "trainer/trainer.h"
#include "trial/trial_runner.h"

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

namespace gpudays {
namespace {

// The values of the options (the phase hook and graph backend are the callers' own).
void expect_same_methods(const MethodOptions& a, const MethodOptions& b, const std::string& what) {
  EXPECT_EQ(a.trainable.fused_kernels, b.trainable.fused_kernels) << what;
  EXPECT_EQ(a.trainable.activation_checkpointing, b.trainable.activation_checkpointing) << what;
  EXPECT_EQ(a.trainable.device, b.trainable.device) << what;
  const EngineOptions& x = a.engine;
  const EngineOptions& y = b.engine;
  EXPECT_EQ(x.sharding, y.sharding) << what;
  EXPECT_EQ(x.offload, y.offload) << what;
  EXPECT_EQ(x.precision, y.precision) << what;
  EXPECT_EQ(x.grad_acc_steps, y.grad_acc_steps) << what;
  EXPECT_EQ(x.clip_grad_norm, y.clip_grad_norm) << what;
  EXPECT_EQ(x.adam, y.adam) << what;
  EXPECT_EQ(x.schedule, y.schedule) << what;
  EXPECT_EQ(x.loss_scaler, y.loss_scaler) << what;
  EXPECT_EQ(x.cuda_graphs, y.cuda_graphs) << what;
  EXPECT_EQ(x.tf32, y.tf32) << what;
}

// bench -> export -> train: the run file `export` writes for a configuration, read as `gpudays
// train` reads it, builds the options the benchmark's trial of that configuration builds.
TEST(OneStepPath, RunFileAndTrialSpecBuildEqualEngineOptions) {
  const std::string path = std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml";
  const ModelSpec model = load_model_file(path);
  const std::vector<MethodSet> sets = {MethodSet{},
                                       MethodSet{true, false, Sharding::kNone, false},
                                       MethodSet{true, true, Sharding::kZero2, false},
                                       MethodSet{false, false, Sharding::kZero3, true}};
  for (const MethodSet& methods : sets) {
    const Configuration config{methods, 2, model.recipe.global_batch / 2};
    ExportRequest request;
    request.model = &model;
    request.gpu = "a100-80gb-sxm";
    request.cluster = {1, 1};
    request.config = config;
    request.tf32_available = true;
    const std::string run_path = test::scratch_dir("one-step-path") + "/run.toml";
    std::ofstream(run_path) << run_config_toml(request);
    const RunFile run = read_run_file(run_path);
    TrainerOptions o;
    o.model = model;
    o.model.recipe = apply_overrides(model.recipe, run.schedule, run_path);
    o.config = configuration_on(run, /*world=*/1);
    o.settings = run.train;
    TrialSpec spec;
    spec.config = config;
    expect_same_methods(
        trainer_methods(o), trial_methods(spec, model, at::kCPU), describe(methods));
  }
}

}  // namespace
}  // namespace gpudays
