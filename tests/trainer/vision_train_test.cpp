// The vision path of the trainer, in-process on an in-memory image set: a tiny ViT learns two
// classes of 16x16 images (bright top half or bright bottom half, with noise) and its held-out
// loss falls well below ln 2, the loss of guessing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <ATen/Parallel.h>

#include "../models/torch_test_util.h"
#include "distributed/communicator.h"
#include "trainer/trainer.h"

namespace gpudays {
namespace {

class HalvesImages final : public data::ImageSamples {
 public:
  int64_t num_samples() const override { return 256; }
  int64_t channels() const override { return 3; }
  int64_t height() const override { return 16; }
  int64_t width() const override { return 16; }
  int64_t num_classes() const override { return 2; }
  int64_t read_sample(int64_t index, uint8_t* pixels) const override {
    std::mt19937 rng(static_cast<uint32_t>(index));
    const int64_t label = index % 2;
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t y = 0; y < 16; ++y) {
        const bool bright = (y < 8) == (label == 0);
        for (int64_t x = 0; x < 16; ++x) {
          *pixels++ = static_cast<uint8_t>((bright ? 160 : 60) + rng() % 16);
        }
      }
    }
    return label;
  }
};

TEST(TrainVision, TinyVitLearnsTwoClassesOfImages) {
  TrainerOptions o;
  at::set_num_threads(1);
  o.model = test::tiny_spec("tiny-vit");
  o.model.arch.num_labels = 2;
  o.model.recipe.train_steps = 60;
  o.model.recipe.lr = 3e-3;
  o.config.micro_batch_size = 4;
  o.config.grad_acc_steps = 2;  // x 1 rank = the recipe's global batch of 8
  o.settings.checkpoint_interval = 0;
  o.settings.eval_interval = 60;
  o.settings.eval_samples = 32;
  o.eval_fraction = 0.125;
  o.out_dir = test::scratch_dir("train-vision");
  const auto comm = make_single_process_communicator();
  const TrainSummary s = train(o, HalvesImages(), *comm);
  EXPECT_EQ(s.steps, 60);
  ASSERT_TRUE(s.last_eval_loss.has_value());
  EXPECT_LT(*s.last_eval_loss, 0.5 * std::log(2.0)) << "held-out loss " << *s.last_eval_loss;
}

}  // namespace
}  // namespace gpudays
