// Behaviour every model family shows, one table each: causality (the causal LMs), bad specs and
// inputs rejected by name, plain vs fused attention agreeing, dropout and drop path acting in
// training only (config.json against transformers': family_config_test.cpp). Family-specific
// checks stay in <family>_test.cpp.
#include <ATen/ops/allclose.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <memory>

#include "catalog/catalog.h"
#include "common/error.h"
#include "family_test_util.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

using test::case_label;
using test::error_of;

// ---- Causality ---------------------------------------------------------------------------------

// tokens: [B, T] int64 -> logits: [B, T, V], through one of a model's implementations.
using Forward = std::function<at::Tensor(const at::Tensor& tokens)>;

struct CausalityCase {
  std::string label;
  int64_t seq_len;
  // One model, each implementation (attention or scan) by name.
  std::function<std::vector<std::pair<std::string, Forward>>()> implementations;
};

void PrintTo(const CausalityCase& c, std::ostream* out) {
  *out << c.label;
}

class Causality : public testing::TestWithParam<CausalityCase> {};

// Changing tokens 10.. leaves the logits of tokens 0..9 bit-identical and changes the later ones.
TEST_P(Causality, FutureTokensDoNotChangeEarlierLogits) {
  const int64_t seq_len = GetParam().seq_len;
  for (const auto& [name, forward] : GetParam().implementations()) {
    const at::Tensor tokens = at::randint(96, {1, seq_len});
    at::Tensor changed = tokens.clone();
    changed.narrow(1, 10, seq_len - 10).random_(96);
    const at::Tensor a = forward(tokens);
    const at::Tensor b = forward(changed);
    EXPECT_TRUE(at::allclose(a.narrow(1, 0, 10), b.narrow(1, 0, 10), 0, 0)) << name;
    EXPECT_FALSE(at::allclose(a.narrow(1, 10, seq_len - 10), b.narrow(1, 10, seq_len - 10)))
        << name;
  }
}

std::vector<std::pair<std::string, Forward>> gpt_neox_by_attention() {
  const GptNeoxForCausalLM model = test::tiny_gpt_neox();
  std::vector<std::pair<std::string, Forward>> result;
  for (const auto kind : {AttentionKind::kPlain, AttentionKind::kFused}) {
    result.emplace_back(to_string(kind), [model = model.ptr(), kind](const at::Tensor& tokens) {
      model->set_attention(kind);
      return model->forward(tokens);
    });
  }
  return result;
}

std::vector<std::pair<std::string, Forward>> llama_by_attention() {
  const LlamaForCausalLM model = test::tiny_llama();
  std::vector<std::pair<std::string, Forward>> result;
  for (const auto kind : {AttentionKind::kPlain, AttentionKind::kFused}) {
    result.emplace_back(to_string(kind), [model = model.ptr(), kind](const at::Tensor& tokens) {
      model->set_attention(kind);
      return model->forward(tokens);
    });
  }
  return result;
}

std::vector<std::pair<std::string, Forward>> mamba_by_scan() {
  const MambaForCausalLM model = test::tiny_mamba();
  std::vector<std::pair<std::string, Forward>> result;
  for (const auto kind : {ScanKind::kPlain, ScanKind::kFused}) {
    result.emplace_back(to_string(kind), [model = model.ptr(), kind](const at::Tensor& tokens) {
      model->set_scan(kind);
      return model->forward(tokens);
    });
  }
  return result;
}

INSTANTIATE_TEST_SUITE_P(Tiny,
                         Causality,
                         testing::Values(CausalityCase{"gpt_neox", 16, gpt_neox_by_attention},
                                         CausalityCase{"mamba", 24, mamba_by_scan},
                                         CausalityCase{"llama", 16, llama_by_attention}),
                         case_label);

// ---- Bad specs and inputs are rejected by name ------------------------------------------------

struct RejectionCase {
  std::string label;
  std::function<std::string()> error;  // the message of what was thrown, or "(no error)"
  std::string expected;                // a part of the message
};

void PrintTo(const RejectionCase& c, std::ostream* out) {
  *out << c.label;
}

class Rejects : public testing::TestWithParam<RejectionCase> {};

TEST_P(Rejects, NamingTheProblem) {
  const std::string error = GetParam().error();
  EXPECT_NE(error.find(GetParam().expected), std::string::npos) << error;
}

// The message of options(catalog model `name`, {}): a spec of another family.
template <typename E, typename Options>
std::function<std::string()> given(const std::string& name, Options options) {
  return [name, options] {
    const ModelSpec spec = Catalog::load({}).model(name);
    return error_of<E>([&] { options(spec, {}); });
  };
}

// The message of options(tests/models/data/<name>.toml with `change`, {}).
template <typename E, typename Options>
std::function<std::string()> changed(const std::string& name,
                                     const std::function<void(ArchSpec&)>& change,
                                     Options options) {
  return [name, change, options] {
    ModelSpec spec = test::tiny_spec(name);
    change(spec.arch);
    return error_of<E>([&] { options(spec, {}); });
  };
}

// The message of running the tiny image model on images of the wrong shape.
template <typename Model>
std::function<std::string()> forward_on(Model (*tiny)(at::ScalarType), std::vector<int64_t> shape) {
  return [tiny, shape] {
    Model model = tiny(at::kFloat);
    return error_of([&] { model->forward(at::randn(shape)); });
  };
}

using E = InputError;  // what the text families throw; the vision tests take any std::exception
using Any = std::exception;

INSTANTIATE_TEST_SUITE_P(
    BadSpec,
    Rejects,
    testing::Values(
        RejectionCase{
            "gpt_neox_given_roberta", given<E>("roberta", gpt_neox_options), "not gpt_neox"},
        RejectionCase{"gpt_neox_heads_not_dividing_d_model",  // 5 heads cannot split 64 channels
                      changed<E>(
                          "tiny-gpt-neox", [](ArchSpec& a) { a.n_heads = 5; }, gpt_neox_options),
                      "n_heads"},
        RejectionCase{"mamba_given_gpt_neox", given<E>("pythia-70m", mamba_options), "not mamba"},
        RejectionCase{"llama_given_gpt_neox", given<E>("pythia-70m", llama_options), "not llama"},
        RejectionCase{"llama_kv_heads_not_dividing_the_heads",  // 3 groups cannot share 4 heads
                      changed<E>(
                          "tiny-llama", [](ArchSpec& a) { a.n_kv_heads = 3; }, llama_options),
                      "n_kv_heads"},
        RejectionCase{"mamba_zero_state_size",
                      changed<E>(
                          "tiny-mamba", [](ArchSpec& a) { a.d_state = 0; }, mamba_options),
                      "d_state"},
        RejectionCase{
            "vit_given_convnext", given<Any>("convnext-large-1k", vit_options), "not vit"},
        RejectionCase{"vit_heads_not_dividing_d_model",  // 5 heads do not divide d_model 32
                      changed<Any>(
                          "tiny-vit", [](ArchSpec& a) { a.n_heads = 5; }, vit_options),
                      "n_heads"},
        RejectionCase{"vit_patches_not_tiling_the_image",  // a patch of 5 does not tile 16
                      changed<Any>(
                          "tiny-vit", [](ArchSpec& a) { a.patch_size = 5; }, vit_options),
                      "image_size"},
        RejectionCase{"vit_wrong_image_size",
                      forward_on(test::tiny_vit, {2, 3, 32, 32}),
                      "vit: images must be [B, 3, 16, 16]"},
        RejectionCase{"convnext_given_vit", given<Any>("vit", convnext_options), "not convnext"},
        RejectionCase{
            "convnext_fewer_widths_than_depths",  // 4 depths, 3 widths
            changed<Any>(
                "tiny-convnext", [](ArchSpec& a) { a.hidden_sizes.pop_back(); }, convnext_options),
            "hidden_sizes"},
        RejectionCase{
            "convnext_image_not_a_multiple_of_the_stride",  // total stride 32
            changed<Any>(
                "tiny-convnext", [](ArchSpec& a) { a.image_size = 48; }, convnext_options),
            "image_size"},
        RejectionCase{"convnext_wrong_channels",
                      forward_on(test::tiny_convnext, {2, 1, 64, 64}),
                      "convnext: images must be [B, 3, H, W]"}),
    case_label);

// ---- Plain vs fused attention -----------------------------------------------------------------

struct AttentionCase {
  std::string label;
  // The same model and input in `dtype`, run with each attention: {plain logits, fused logits}.
  std::function<std::pair<at::Tensor, at::Tensor>(at::ScalarType dtype)> run;
};

void PrintTo(const AttentionCase& c, std::ostream* out) {
  *out << c.label;
}

class PlainVsFused : public testing::TestWithParam<AttentionCase> {};

// Same weights, same input: the two attention paths compute the same maths in a different order.
// Tolerance 1e-5 absolute on logits of magnitude ~1 in fp32 (a few ulps per op); 1e-12 in fp64.
TEST_P(PlainVsFused, AttentionAgrees) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const auto [plain, fused] = GetParam().run(dtype);
    const double diff = test::max_abs_diff(plain, fused);
    EXPECT_LT(diff, dtype == at::kFloat ? 1e-5 : 1e-12) << c10::toString(dtype);
    std::cout << "[plain vs fused] " << GetParam().label << " " << c10::toString(dtype)
              << ": max abs diff " << diff << "\n";
  }
}

template <typename Model, typename... Inputs>
std::pair<at::Tensor, at::Tensor> both_attentions(Model model, const Inputs&... inputs) {
  model->set_attention(AttentionKind::kPlain);
  const at::Tensor plain = model->forward(inputs...);
  model->set_attention(AttentionKind::kFused);
  return {plain, model->forward(inputs...)};
}

std::pair<at::Tensor, at::Tensor> gpt_neox_attentions(at::ScalarType dtype) {
  GptNeoxForCausalLM model = test::tiny_gpt_neox(dtype);
  return both_attentions(model, at::randint(96, {2, 16}));
}

// Grouped-query (tiny-llama: 2 query heads per key/value head) and multi-query (tiny-qwen2: one
// key/value head for 4): plain repeats the heads, fused hands the groups to the kernel.
std::pair<at::Tensor, at::Tensor> llama_attentions(const std::string& name, at::ScalarType dtype) {
  LlamaForCausalLM model = test::tiny_llama(name, dtype);
  return both_attentions(model, at::randint(96, {2, 16}));
}

std::pair<at::Tensor, at::Tensor> roberta_with_padding(at::ScalarType dtype) {
  RobertaForMaskedLM model = test::tiny_roberta(dtype);
  at::Tensor tokens = at::randint(4, 95, {2, 16});  // ordinary tokens
  tokens.narrow(1, 12, 4)[1].fill_(1);              // the second sequence ends in padding
  at::Tensor mask = at::ones({2, 16});
  mask.narrow(1, 12, 4)[1].zero_();
  return both_attentions(model, tokens, mask);
}

std::pair<at::Tensor, at::Tensor> vit_in_eval(at::ScalarType dtype) {
  VitForImageClassification model = test::tiny_vit(dtype);
  model->eval();
  return both_attentions(model, at::randn({4, 3, 16, 16}, at::TensorOptions().dtype(dtype)));
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    PlainVsFused,
    testing::Values(
        AttentionCase{"gpt_neox", gpt_neox_attentions},
        AttentionCase{"roberta_with_a_padding_mask", roberta_with_padding},
        AttentionCase{"vit", vit_in_eval},
        AttentionCase{"llama_grouped_query",
                      [](at::ScalarType dtype) { return llama_attentions("tiny-llama", dtype); }},
        AttentionCase{"qwen2_multi_query",
                      [](at::ScalarType dtype) { return llama_attentions("tiny-qwen2", dtype); }}),
    case_label);

// ---- Dropout and drop path act in training only ------------------------------------------------

struct RegularisationCase {
  std::string label;
  std::function<test::ImageModel()> build;  // a model in training mode
  std::vector<int64_t> images;              // [B, C, H, W]
};

void PrintTo(const RegularisationCase& c, std::ostream* out) {
  *out << c.label;
}

class Regularisation : public testing::TestWithParam<RegularisationCase> {};

// In training mode two runs on the same images differ; in eval mode they are bit-identical.
TEST_P(Regularisation, ActsInTrainingOnly) {
  const test::ImageModel model = GetParam().build();
  const at::Tensor images = at::randn(GetParam().images);
  EXPECT_FALSE(at::allclose(model.classify(images), model.classify(images)));
  model.module->eval();
  EXPECT_TRUE(at::allclose(model.classify(images), model.classify(images), 0, 0));
}

// ConvNeXt's stochastic depth: drop path 0.5, layer scale 1 so that the dropped branches matter.
test::ImageModel convnext_drop_path() {
  ConvnextOptions options = test::tiny_convnext_options();
  options.drop_path_rate = 0.5;
  options.layer_scale_init = 1.0;
  torch::manual_seed(0);
  return test::image_model(ConvnextForImageClassification(options));
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    Regularisation,
    testing::Values(RegularisationCase{"vit_dropout",  // the recipe's dropout 0.1
                                       [] { return test::image_model(test::tiny_vit()); },
                                       {2, 3, 16, 16}},
                    RegularisationCase{"convnext_drop_path", convnext_drop_path, {4, 3, 64, 64}}),
    test::case_label);

}  // namespace
}  // namespace gpudays::models
