// Random states in checkpoints, in-process: a tiny GPT-NeoX with dropout trains 10 steps (a
// checkpoint at 5 and 10); a copy of the run without its step-10 checkpoint resumes from step 5.
// Dropout draws from the CPU generator on the CPU and from the device's on CUDA, so the resumed
// losses equal the uninterrupted run's only when the checkpoint restored that generator: on the CPU
// bit for bit, on CUDA within 1e-5 (atomics in CUDA backward kernels may reorder sums; a dropout
// mask drawn anew changes the loss by about 1e-2). The CUDA test skips without a GPU. RoBERTa's
// masked LM resumes exactly too (its masks drawn per step and sample, not from a global state).
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <filesystem>
#include <random>

#include "../models/torch_test_util.h"
#include "distributed/communicator.h"
#include "engine/device.h"
#include "models/safetensors.h"
#include "train_cli_util.h"
#include "trainer/trainer.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

class RandomTokens final : public data::TokenSamples {
 public:
  explicit RandomTokens(int64_t tokens) : tokens_(tokens) {}
  int64_t num_samples() const override { return 256; }
  int64_t sample_tokens() const override { return tokens_; }
  int64_t vocab_limit() const override { return 96; }
  void read_sample(int64_t index, int64_t* out) const override {
    std::mt19937 rng(static_cast<uint32_t>(index));
    for (int64_t i = 0; i < tokens_; ++i) out[i] = static_cast<int64_t>(rng() % 96);
  }

 private:
  int64_t tokens_;
};

// Trains to step 10, then resumes a copy from step 5; returns the largest loss difference.
double resumed_loss_difference(c10::Device device,
                               const std::string& name,
                               const std::string& model = "tiny-gpt-neox") {
  at::set_num_threads(1);
  TrainerOptions o;
  o.model = test::tiny_spec(model);
  o.model.recipe.dropout = 0.2;
  o.model.recipe.train_steps = 10;
  o.config.micro_batch_size = 4;
  o.config.grad_acc_steps = 2;
  o.settings.checkpoint_interval = 5;
  o.settings.eval_interval = 0;
  o.device = device;
  const fs::path dir = test::scratch_dir(name);
  fs::remove_all(dir);
  o.out_dir = (dir / "whole").string();
  const auto comm = make_single_process_communicator();
  const RandomTokens samples(o.model.arch.seq_len);
  train(o, samples, *comm);
  const std::string rng = device.is_cuda() ? "rng.cuda" : "rng.cpu";
  EXPECT_TRUE(
      models::SafetensorsReader((dir / "whole/checkpoints/step-5/rank-0.safetensors").string())
          .contains(rng));
  fs::copy(dir / "whole", dir / "resumed", fs::copy_options::recursive);
  fs::remove_all(dir / "resumed/checkpoints/step-10");
  o.out_dir = (dir / "resumed").string();
  o.resume = true;
  train(o, samples, *comm);
  const auto a = test::read_metrics(dir / "whole"), b = test::read_metrics(dir / "resumed");
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(b.size(), 10u);
  double diff = 0.0;
  for (const auto& [step, j] : a) {
    diff =
        std::max(diff, std::abs(j.at("loss").get<double>() - b.at(step).at("loss").get<double>()));
  }
  return diff;
}

TEST(TrainResume, DropoutResumesExactlyOnTheCpu) {
  EXPECT_EQ(resumed_loss_difference(c10::kCPU, "resume-rng-cpu"), 0.0);
}

// RoBERTa's masked LM: the masks come from (seed, step, sample), dropout from the CPU generator.
TEST(TrainResume, MaskedLmResumesExactlyOnTheCpu) {
  EXPECT_EQ(resumed_loss_difference(c10::kCPU, "resume-rng-mlm", "tiny-roberta"), 0.0);
}

TEST(TrainResume, DropoutResumesOnCuda_CUDA) {
  if (!cuda_available()) {
    GTEST_SKIP() << (cuda_built() ? "no CUDA GPU is visible" : "this build has no CUDA");
  }
  EXPECT_LT(resumed_loss_difference(c10::Device(c10::kCUDA, 0), "resume-rng-cuda"), 1e-5);
}

}  // namespace
}  // namespace gpudays
