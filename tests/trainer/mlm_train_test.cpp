// RoBERTa's masked LM in the trainer: the masking statistics of the trainer's batches are BERT's
// (15% of the non-special tokens selected; of those 80% <mask>, 10% a random id, 10% unchanged;
// labels only at the selected positions), a sample is masked the same whatever the micro-batch it
// travels in, and a tiny RoBERTa's masked-LM loss falls to what reading the context allows.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <iostream>
#include <random>

#include "../models/torch_test_util.h"
#include "distributed/communicator.h"
#include "train_cli_util.h"
#include "trainer/sample_batches.h"
#include "trainer/trainer.h"

namespace gpudays {
namespace {

// Samples of `tokens` ids, each sample's from one of 8 groups of 8 ids (group g: 4 + 8g .. 11 + 8g;
// RoBERTa's specials 0-3 and <mask> = vocab - 1 are none of them), uniformly: 3 bits (ln 8 = 2.08
// nats) per token once the other tokens show the group, 6 bits (ln 64 = 4.16) without them. Every
// 8th sample starts with <s> (0) and ends with </s> (2), special ids the masking must skip.
class GroupTokens final : public data::TokenSamples {
 public:
  GroupTokens(int64_t count, int64_t tokens) : count_(count), tokens_(tokens) {}
  int64_t num_samples() const override { return count_; }
  int64_t sample_tokens() const override { return tokens_; }
  int64_t vocab_limit() const override { return 96; }
  void read_sample(int64_t index, int64_t* out) const override {
    std::mt19937 rng(static_cast<uint32_t>(index));
    const int64_t group = static_cast<int64_t>(rng() % 8);
    for (int64_t i = 0; i < tokens_; ++i) out[i] = 4 + 8 * group + static_cast<int64_t>(rng() % 8);
    if (index % 8 == 0) {
      out[0] = 0;
      out[tokens_ - 1] = 2;
    }
  }

 private:
  int64_t count_, tokens_;
};

TEST(TrainMlm, MaskingStatisticsAreBerts) {
  const ModelSpec spec = test::tiny_spec("tiny-roberta");  // vocab 96: <mask> = 95
  const GroupTokens samples(4000, spec.arch.seq_len);
  const SampleBatches batches = token_batches(spec, samples, /*seed=*/9);
  std::vector<int64_t> all(4000);
  for (int64_t i = 0; i < 4000; ++i) all[static_cast<size_t>(i)] = i;
  const models::Batch b = batches.batch(all, /*round=*/3);
  at::Tensor original = at::empty_like(b.input_ids);
  for (int64_t i = 0; i < 4000; ++i) samples.read_sample(i, original[i].data_ptr<int64_t>());
  const at::Tensor special = (original == 0) | (original == 2);
  const at::Tensor selected = b.labels != -100;
  EXPECT_FALSE(selected.logical_and(special).any().item<bool>()) << "a special token was selected";
  EXPECT_TRUE(at::equal(b.labels.masked_select(selected), original.masked_select(selected)));
  EXPECT_TRUE(at::equal(b.input_ids.masked_select(~selected), original.masked_select(~selected)));
  const double candidates = (~special).sum().item<double>();
  const double n = selected.sum().item<double>();
  const double masked = (selected & (b.input_ids == 95)).sum().item<double>();
  const double kept = (selected & (b.input_ids == original)).sum().item<double>();
  const double random = n - masked - kept;
  // Binomial tolerances of 5 standard deviations (about 64,000 candidates, 9,600 selected).
  const auto near = [](double got, double p, double trials) {
    return std::abs(got / trials - p) < 5.0 * std::sqrt(p * (1 - p) / trials);
  };
  EXPECT_TRUE(near(n, 0.15, candidates)) << n / candidates;
  EXPECT_TRUE(near(masked, 0.8, n)) << masked / n;
  // A random id equals the original with probability 1/96: it then counts as kept.
  EXPECT_TRUE(near(random, 0.1 * (1 - 1.0 / 96), n)) << random / n;
  EXPECT_TRUE(near(kept, 0.1 + 0.1 / 96, n)) << kept / n;
  // The same sample, alone or in another batch, in the same round: the same masking; another
  // round: another one.
  const models::Batch one = batches.batch({17}, 3);
  EXPECT_TRUE(at::equal(one.input_ids[0], b.input_ids[17]));
  EXPECT_TRUE(at::equal(one.labels[0], b.labels[17]));
  const models::Batch later = batches.batch(all, 4);
  EXPECT_FALSE(at::equal(later.labels, b.labels));
}

TEST(TrainMlm, TinyRobertaMaskedLossFalls) {
  constexpr int64_t kSteps = 400;
  TrainerOptions o;
  at::set_num_threads(1);
  o.model = test::tiny_spec("tiny-roberta");
  o.model.recipe.train_steps = kSteps;
  o.model.recipe.lr = 3e-3;
  o.config.micro_batch_size = 4;
  o.config.grad_acc_steps = 2;  // x 1 rank = the recipe's global batch of 8
  o.settings.checkpoint_interval = 0;
  o.settings.eval_interval = kSteps;
  o.settings.eval_samples = 64;
  o.eval_fraction = 0.1;
  o.out_dir = test::scratch_dir("train-mlm");
  const auto comm = make_single_process_communicator();
  const TrainSummary s = train(o, GroupTokens(1024, o.model.arch.seq_len), *comm);
  EXPECT_EQ(s.steps, kSteps);
  ASSERT_TRUE(s.last_eval_loss.has_value());
  const auto m = test::read_metrics(o.out_dir);
  double first = 0.0, last = 0.0;
  for (int64_t step = 1; step <= 20; ++step) {
    first += m.at(step).at("loss").get<double>() / 20;
    last += m.at(kSteps + 1 - step).at("loss").get<double>() / 20;
  }
  std::cout << "masked LM: loss " << first << " -> " << last << " (means of 20 steps); held-out "
            << *s.last_eval_loss << "\n";
  // Without the context a masked token costs ln 64 = 4.16 nats, with it ln 8 = 2.08: the held-out
  // loss must end nearer the second (measured: 4.44 -> 2.29, means of 20 steps; held-out 2.35).
  EXPECT_LT(last, first - 1.5);
  EXPECT_LT(*s.last_eval_loss, 0.75 * std::log(64.0)) << "held-out loss " << *s.last_eval_loss;
}

}  // namespace
}  // namespace gpudays
