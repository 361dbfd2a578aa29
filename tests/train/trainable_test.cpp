// Methods applied to a real zoo model (tiny GPT-NeoX) through the engine: activation checkpointing
// via the block runner gives the same parameters bit for bit; fused attention agrees with plain.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "catalog/model_loader.h"
#include "common/error.h"
#include "dist/communicator.h"
#include "train/engine.h"
#include "train/trainable.h"

namespace gpudays {
namespace {

std::vector<at::Tensor> train_tiny(const TrainableOptions& t, const MethodSet& methods, int steps,
                                   std::vector<double>* losses = nullptr) {
  const ModelSpec spec =
      load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/tiny-gpt-neox.toml");
  at::manual_seed(11);  // the initial weights
  auto model = make_trainable(spec, t);
  auto comm = make_single_process_communicator();
  Engine engine(model->parameters(), *comm, engine_options(spec.recipe, methods, 2));
  for (int s = 0; s < steps; ++s) {
    const StepResult r = engine.step([&](int64_t i) { return model->micro_loss(s * 8 + i * 4, 4); });
    if (losses != nullptr) losses->push_back(r.loss);
  }
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

double max_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

TEST(Trainable, EveryZooFamilyTrainsAndCheckpointingIsRefusedWhereNotWired) {
  for (const char* file :
       {"tiny-roberta.toml", "tiny-vit.toml", "tiny-convnext.toml", "tiny-mamba.toml"}) {
    const ModelSpec spec = load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/" + file);
    auto model = make_trainable(spec, {false, false, 1234});
    auto comm = make_single_process_communicator();
    Engine engine(model->parameters(), *comm, engine_options(spec.recipe, MethodSet{}, 1));
    const StepResult r = engine.step([&](int64_t) { return model->micro_loss(0, 2); });
    EXPECT_TRUE(std::isfinite(r.loss)) << file;
    EXPECT_THROW(make_trainable(spec, {false, true, 1234}), InputError) << file;
  }
}

TEST(Trainable, CheckpointingThroughTheBlockRunnerIsBitIdentical) {
  const auto plain = train_tiny({false, false, 1234}, MethodSet{}, 3);
  const auto checkpointed = train_tiny({false, true, 1234}, MethodSet{}, 3);
  EXPECT_EQ(max_diff(plain, checkpointed), 0.0);
}

// Fused and plain attention differ only in rounding; Adam turns a rounding difference in a
// near-zero gradient into up to one learning rate (1e-3) of parameter movement, so compare the
// losses, which must agree to fp32 rounding.
TEST(Trainable, FusedAttentionAgreesWithPlain) {
  std::vector<double> plain, fused;
  train_tiny({false, false, 1234}, MethodSet{}, 5, &plain);
  train_tiny({true, false, 1234}, MethodSet{true, false, Sharding::kNone, false}, 5, &fused);
  ASSERT_EQ(plain.size(), 5u);
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(plain[i], fused[i], 1e-5 * plain[i]) << i;
  EXPECT_NE(plain.front(), plain.back());  // it trained
}

}  // namespace
}  // namespace gpudays
