// Parameter names and shapes are HuggingFace's, for every family with a table here: the number of
// parameter tensors, a sample of names with their shapes, names that must not exist, and the
// logits' shape. Checkpoints in HF names load without renaming (checkpoint.h).
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "family_test_util.h"

namespace gpudays::models {
namespace {

using Shape = std::vector<int64_t>;

struct TinyModel {
  std::shared_ptr<torch::nn::Module> module;
  std::function<at::Tensor(const at::Tensor&)> forward;  // tokens or images -> logits
};

struct NamesCase {
  std::string label;
  std::function<TinyModel()> build;  // the tiny model (seed 0)
  size_t parameter_tensors;
  std::vector<std::pair<std::string, Shape>> shapes;
  std::vector<std::string> absent;
  std::function<at::Tensor()> input;  // drawn after the model is built
  Shape logits;
};

void PrintTo(const NamesCase& c, std::ostream* out) {
  *out << c.label;
}

class ParameterNames : public testing::TestWithParam<NamesCase> {};

TEST_P(ParameterNames, AndShapesAreHuggingFaces) {
  const NamesCase& c = GetParam();
  const TinyModel model = c.build();
  const auto params = model.module->named_parameters();
  EXPECT_EQ(params.size(), c.parameter_tensors);
  for (const auto& [name, shape] : c.shapes) {
    const at::Tensor* p = params.find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->sizes().vec(), shape) << name;
  }
  for (const std::string& name : c.absent) EXPECT_EQ(params.find(name), nullptr) << name;
  EXPECT_EQ(model.forward(c.input()).sizes().vec(), c.logits);
}

template <typename Model>
TinyModel tiny(Model model) {
  return {model.ptr(), [model = model.ptr()](const at::Tensor& x) { return model->forward(x); }};
}

const std::string kMixer = "backbone.layers.1.mixer.";
const std::string kLayer = "model.layers.1.";

// The llama family's three variants, as transformers' Llama/Qwen2/OlmoForCausalLM name them.
const NamesCase kLlamaCases[] = {
    {"llama",
     [] { return tiny(test::tiny_llama("tiny-llama")); },
     1 + 2 * 9 + 1 + 1u,  // embed_tokens, 7 matrices and 2 norms per layer, norm, lm_head
     {{"model.embed_tokens.weight", {96, 64}},
      {kLayer + "self_attn.q_proj.weight", {64, 64}},
      {kLayer + "self_attn.k_proj.weight", {32, 64}},  // 2 key/value heads of 16
      {kLayer + "self_attn.v_proj.weight", {32, 64}},
      {kLayer + "self_attn.o_proj.weight", {64, 64}},
      {kLayer + "mlp.gate_proj.weight", {96, 64}},
      {kLayer + "mlp.up_proj.weight", {96, 64}},
      {kLayer + "mlp.down_proj.weight", {64, 96}},
      {kLayer + "input_layernorm.weight", {64}},
      {kLayer + "post_attention_layernorm.weight", {64}},
      {"model.norm.weight", {64}},
      {"lm_head.weight", {96, 64}}},
     {kLayer + "self_attn.q_proj.bias", kLayer + "self_attn.o_proj.bias"},
     [] {
       return at::randint(96, {3, 16});
     },
     {3, 16, 96}},
    {"qwen2",
     [] { return tiny(test::tiny_llama("tiny-qwen2")); },
     1 + 2 * 12 + 1u,  // embed_tokens, 7 matrices, 3 biases and 2 norms per layer, norm; tied
     {{kLayer + "self_attn.q_proj.bias", {64}},
      {kLayer + "self_attn.k_proj.weight", {16, 64}},  // one key/value head
      {kLayer + "self_attn.k_proj.bias", {16}},
      {kLayer + "self_attn.v_proj.bias", {16}}},
     {kLayer + "self_attn.o_proj.bias", "lm_head.weight"},
     [] {
       return at::randint(96, {3, 16});
     },
     {3, 16, 96}},
    {"olmo",
     [] { return tiny(test::tiny_llama("tiny-olmo")); },
     1 + 2 * 7u,  // embed_tokens, 7 matrices per layer; no norm weights; tied
     {{kLayer + "self_attn.k_proj.weight", {64, 64}}},
     {kLayer + "input_layernorm.weight",
      kLayer + "post_attention_layernorm.weight",
      "model.norm.weight",
      "lm_head.weight"},
     [] {
       return at::randint(96, {3, 16});
     },
     {3, 16, 96}},
};

INSTANTIATE_TEST_SUITE_P(Llama, ParameterNames, testing::ValuesIn(kLlamaCases), test::case_label);

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    ParameterNames,
    testing::Values(NamesCase{"gpt_neox",
                              [] { return tiny(test::tiny_gpt_neox()); },
                              1 + 2 * 12 + 2 + 1u,  // embed_in, 12 per layer, final norm, embed_out
                              {{"gpt_neox.embed_in.weight", {96, 64}},
                               {"gpt_neox.layers.1.attention.query_key_value.weight", {192, 64}},
                               {"gpt_neox.layers.0.mlp.dense_h_to_4h.bias", {256}},
                               {"gpt_neox.layers.0.post_attention_layernorm.weight", {64}},
                               {"gpt_neox.final_layer_norm.bias", {64}},
                               {"embed_out.weight", {96, 64}}},
                              {},
                              [] {
                                return at::randint(96, {3, 16});
                              },
                              {3, 16, 96}},
                    NamesCase{"mamba",
                              [] { return tiny(test::tiny_mamba()); },
                              1 + 2 * 10 + 1u,  // embeddings, 10 per layer, norm_f; lm_head is tied
                              {{"backbone.embeddings.weight", {96, 32}},
                               {"backbone.layers.0.norm.weight", {32}},
                               {kMixer + "in_proj.weight", {128, 32}},
                               {kMixer + "conv1d.weight", {64, 1, 4}},
                               {kMixer + "conv1d.bias", {64}},
                               {kMixer + "x_proj.weight", {4 + 2 * 16, 64}},
                               {kMixer + "dt_proj.weight", {64, 4}},
                               {kMixer + "dt_proj.bias", {64}},
                               {kMixer + "A_log", {64, 16}},
                               {kMixer + "D", {64}},
                               {kMixer + "out_proj.weight", {32, 64}},
                               {"backbone.norm_f.weight", {32}}},
                              {kMixer + "in_proj.bias"},  // proj_bias = false
                              [] {
                                return at::randint(96, {3, 24});
                              },
                              {3, 24, 96}},
                    NamesCase{"vit",
                              [] { return tiny(test::tiny_vit()); },
                              4 + 2 * 16 + 2 + 2u,  // embeddings, 16 per layer, final norm, head
                              {{"vit.embeddings.cls_token", {1, 1, 32}},
                               {"vit.embeddings.position_embeddings", {1, 17, 32}},
                               {"vit.embeddings.patch_embeddings.projection.weight", {32, 3, 4, 4}},
                               {"vit.encoder.layer.1.attention.attention.query.weight", {32, 32}},
                               {"vit.encoder.layer.1.attention.attention.value.bias", {32}},
                               {"vit.encoder.layer.0.attention.output.dense.weight", {32, 32}},
                               {"vit.encoder.layer.0.intermediate.dense.weight", {64, 32}},
                               {"vit.encoder.layer.0.output.dense.weight", {32, 64}},
                               {"vit.encoder.layer.0.layernorm_before.weight", {32}},
                               {"vit.encoder.layer.0.layernorm_after.bias", {32}},
                               {"vit.layernorm.weight", {32}},
                               {"classifier.weight", {10, 32}}},
                              {},
                              [] {
                                return at::randn({3, 3, 16, 16});
                              },
                              {3, 10}},
                    NamesCase{
                        "convnext",
                        [] { return tiny(test::tiny_convnext()); },
                        // stem 4, 9 per block x 6 blocks, 4 per downsampling x 3, final norm 2,
                        // classifier 2
                        4 + 9 * 6 + 4 * 3 + 2 + 2u,
                        {{"convnext.embeddings.patch_embeddings.weight", {8, 3, 4, 4}},
                         {"convnext.embeddings.layernorm.bias", {8}},
                         {"convnext.encoder.stages.0.layers.1.dwconv.weight", {8, 1, 7, 7}},
                         {"convnext.encoder.stages.2.layers.0.layernorm.weight", {24}},
                         {"convnext.encoder.stages.2.layers.1.pwconv1.weight", {96, 24}},
                         {"convnext.encoder.stages.2.layers.1.pwconv2.bias", {24}},
                         {"convnext.encoder.stages.3.layers.0.layer_scale_parameter", {32}},
                         {"convnext.encoder.stages.1.downsampling_layer.0.weight", {8}},
                         {"convnext.encoder.stages.1.downsampling_layer.1.weight", {16, 8, 2, 2}},
                         {"convnext.layernorm.weight", {32}},
                         {"classifier.weight", {10, 32}}},
                        {"convnext.encoder.stages.0.downsampling_layer.0.weight"},
                        [] {
                          return at::randn({3, 3, 64, 64});
                        },
                        {3, 10}}),
    test::case_label);

}  // namespace
}  // namespace gpudays::models
