// RoBERTa unit tests: RoBERTa's position ids, padding that changes nothing else, the recipe's MLM
// masking statistics, hub-checkpoint extras, a falling loss on a masked task. Parameter count,
// plain vs fused attention with a padding mask and finite differences are in family_test.cpp and
// family_behaviour_test.cpp.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include "common/error.h"
#include "family_test_util.h"
#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/losses.h"
#include "models/roberta.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

// Ordinary token ids of the tiny vocabulary (96): 4 .. 94 (0-3 and 95 are special).
at::Tensor ordinary_tokens(int64_t batch, int64_t seq) {
  return at::randint(4, 95, {batch, seq});
}

TEST(Roberta, PositionIdsCountNonPaddingTokensFromThePaddingOffset) {
  const at::Tensor tokens = at::tensor({5, 6, 7, 5, 1, 1}, at::kLong).view({2, 3});
  const at::Tensor expected = at::tensor({2, 3, 4, 2, 1, 1}, at::kLong).view({2, 3});
  EXPECT_TRUE(at::equal(roberta_position_ids(tokens, /*pad_token_id=*/1), expected));
}

TEST(Roberta, PaddingChangesNoOtherTokensLogits) {
  RobertaForMaskedLM model = test::tiny_roberta();
  const at::Tensor tokens = ordinary_tokens(1, 10);
  const at::Tensor padded = at::cat({tokens, at::full({1, 6}, 1, at::kLong)}, /*dim=*/1);
  const at::Tensor mask = at::cat({at::ones({1, 10}), at::zeros({1, 6})}, /*dim=*/1);
  for (const auto kind : {AttentionKind::kPlain, AttentionKind::kFused}) {
    model->set_attention(kind);
    const at::Tensor a = model->forward(tokens);
    const at::Tensor b = model->forward(padded, mask).narrow(1, 0, 10);
    EXPECT_LT(test::max_abs_diff(a, b), 1e-5) << to_string(kind);
  }
}

TEST(Roberta, MlmMaskingFollowsTheRecipe) {
  const ModelSpec spec = test::tiny_spec("tiny-roberta");
  const MlmOptions options = roberta_mlm_options(spec);
  EXPECT_EQ(options.mask_token_id, 95);
  at::Tensor tokens = ordinary_tokens(64, 512);
  tokens.narrow(1, 0, 1).fill_(kRobertaBosId);
  tokens.narrow(1, 511, 1).fill_(kRobertaEosId);
  tokens.narrow(1, 400, 111).fill_(spec.arch.pad_token_id);
  const MlmBatch b = mask_tokens(tokens, options, at::make_generator<at::CPUGeneratorImpl>(42));
  const at::Tensor selected = b.labels.ne(-100);
  const at::Tensor ordinary = tokens.ge(4).logical_and(tokens.lt(95));
  EXPECT_FALSE(selected.logical_and(ordinary.logical_not()).any().item<bool>())
      << "special tokens are never selected";
  EXPECT_TRUE(at::equal(b.labels.masked_select(selected), tokens.masked_select(selected)));
  EXPECT_TRUE(at::equal(b.inputs.masked_select(~selected), tokens.masked_select(~selected)));
  const double n_ordinary = ordinary.sum().item<double>();
  const double n_selected = selected.sum().item<double>();
  const double masked = b.inputs.eq(95).logical_and(selected).sum().item<double>() / n_selected;
  const double kept = b.inputs.eq(tokens).logical_and(selected).sum().item<double>() / n_selected;
  EXPECT_NEAR(n_selected / n_ordinary, 0.15, 0.01);  // ~3,000 selections: sd 0.002
  EXPECT_NEAR(masked, 0.8, 0.03);
  EXPECT_NEAR(kept, 0.1 + 0.1 / 96, 0.03);  // unchanged, or replaced by the same id
}

TEST(Roberta, HubCheckpointExtrasAreSkippedButUnknownTensorsAreNot) {
  RobertaForMaskedLM model = test::tiny_roberta();
  const std::string path = test::scratch_dir("roberta-hub") + "/model.safetensors";
  NamedTensors state = named_state(*model);
  state.emplace_back("lm_head.decoder.weight",
                     model->named_parameters()["roberta.embeddings.word_embeddings.weight"]);
  state.emplace_back("roberta.pooler.dense.weight", at::randn({64, 64}));
  write_safetensors(path, state);
  RobertaForMaskedLM other = test::tiny_roberta();
  EXPECT_NO_THROW(load_safetensors(*other, path, hf_load_options(Family::kRoberta)));
  state.emplace_back("roberta.something.else", at::randn({2}));
  write_safetensors(path, state);
  EXPECT_THROW(load_safetensors(*other, path, hf_load_options(Family::kRoberta)), InputError);
}

// Sequences that count upwards from a random start: every masked token follows from its
// neighbours. Fresh masks each step (the recipe's 15%), Adam, 200 steps; the last 20 averaged.
TEST(Roberta, LossFallsOnALearnableSyntheticTask) {
  const ModelSpec spec = test::tiny_spec("tiny-roberta");
  RobertaForMaskedLM model = test::tiny_roberta();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  const at::Tensor tokens = (at::randint(91, {16, 1}) + at::arange(16).view({1, 16})) % 91 + 4;
  const MlmOptions mlm = roberta_mlm_options(spec);
  model->train();
  double first = 0;
  double last = 0;
  for (int step = 0; step < 200; ++step) {
    const MlmBatch b = mask_tokens(tokens, mlm);
    optimizer.zero_grad();
    const at::Tensor loss = masked_lm_loss(model->forward(b.inputs), b.labels);
    loss.backward();
    optimizer.step();
    if (step == 0) first = loss.item<double>();
    if (step >= 180) last += loss.item<double>() / 20;
  }
  EXPECT_LT(last, 0.3 * first);
  std::cout << "[synthetic task] roberta loss " << first << " -> " << last << " in 200 steps\n";
}

}  // namespace
}  // namespace gpudays::models
