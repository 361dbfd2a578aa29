// GPT-NeoX unit tests: HF parameter names and shapes. Parity with transformers is in
// parity_test.cpp; parameter counts, plain vs fused attention, causality, finite differences, the
// synthetic task and bad specs are in family_test.cpp and family_behaviour_test.cpp.
#include <ATen/ops/randint.h>
#include <gtest/gtest.h>

#include "family_test_util.h"
#include "models/gpt_neox.h"

namespace gpudays::models {
namespace {

TEST(GptNeox, ParameterNamesAndShapesAreHuggingFaces) {
  GptNeoxForCausalLM model = test::tiny_gpt_neox();
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), 1 + 2 * 12 + 2 + 1u);  // embed_in, 12 per layer, final norm, embed_out
  EXPECT_EQ(params["gpt_neox.embed_in.weight"].sizes(), (at::IntArrayRef{96, 64}));
  EXPECT_EQ(params["gpt_neox.layers.1.attention.query_key_value.weight"].sizes(),
            (at::IntArrayRef{192, 64}));
  EXPECT_EQ(params["gpt_neox.layers.0.mlp.dense_h_to_4h.bias"].sizes(), (at::IntArrayRef{256}));
  EXPECT_EQ(params["gpt_neox.layers.0.post_attention_layernorm.weight"].sizes(),
            (at::IntArrayRef{64}));
  EXPECT_EQ(params["gpt_neox.final_layer_norm.bias"].sizes(), (at::IntArrayRef{64}));
  EXPECT_EQ(params["embed_out.weight"].sizes(), (at::IntArrayRef{96, 64}));
  const at::Tensor tokens = at::randint(96, {3, 16});
  EXPECT_EQ(model->forward(tokens).sizes(), (at::IntArrayRef{3, 16, 96}));
}

}  // namespace
}  // namespace gpudays::models
