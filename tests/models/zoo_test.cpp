// Zoo tests: synthetic batches have the recipe's shapes and value ranges; unimplemented families
// and attention names fail naming the valid choices. The training step every family takes through
// the zoo is in family_test.cpp.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/equal.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include "common/error.h"
#include "models/roberta.h"
#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

TEST(Zoo, SyntheticBatchesHaveTheRecipesShapesAndRanges) {
  const auto gen = [] { return at::make_generator<at::CPUGeneratorImpl>(3); };
  const ModelSpec neox = test::tiny_spec("tiny-gpt-neox");
  const Batch a = synthetic_batch(neox, {.batch_size = 4, .generator = gen()});
  EXPECT_EQ(a.input_ids.sizes(), (at::IntArrayRef{4, 16}));
  EXPECT_TRUE(at::equal(a.labels, a.input_ids));
  EXPECT_GE(a.input_ids.min().item<int64_t>(), 0);
  EXPECT_LT(a.input_ids.max().item<int64_t>(), neox.arch.vocab_size);
  EXPECT_TRUE(at::equal(synthetic_batch(neox, {.batch_size = 4, .generator = gen()}).input_ids,
                        a.input_ids))
      << "same generator, same batch";
  SyntheticOptions short_samples;
  short_samples.batch_size = 2;
  short_samples.seq_len = 8;
  EXPECT_EQ(synthetic_batch(neox, short_samples).input_ids.size(1), 8);

  const ModelSpec roberta = test::tiny_spec("tiny-roberta");
  const Batch b = synthetic_batch(roberta, {.batch_size = 64, .generator = gen()});
  const at::Tensor selected = b.labels.ne(-100);
  EXPECT_NEAR(selected.to(at::kFloat).mean().item<double>(), 0.15, 0.02);
  EXPECT_GT(b.labels.masked_select(selected).min().item<int64_t>(), kRobertaUnkId)
      << "originals are ordinary tokens";
  EXPECT_TRUE(b.input_ids.masked_select(selected).eq(95).any().item<bool>()) << "<mask> used";
}

TEST(Zoo, FailuresNameTheValidChoices) {
  EXPECT_EQ(parse_attention_kind("fused"), AttentionKind::kFused);
  try {
    parse_attention_kind("flash");
    FAIL() << "unknown attention kind";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plain or fused"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpudays::models
