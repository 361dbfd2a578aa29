// The checks every model family takes, one table each: full-size parameter counts on the meta
// device against HF and the planner, fp64 finite differences, a loss that falls on a synthetic
// task, a training step through the zoo. Family-specific checks stay in <family>_test.cpp; the
// behaviour every family shows (causality, rejections, attention paths, config.json) is in
// family_behaviour_test.cpp.
#include <ATen/ops/arange.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "family_test_util.h"
#include "models/losses.h"
#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

using test::case_label;

// ---- Full-size parameter counts ---------------------------------------------------------------

using BuildOnMeta = std::function<std::shared_ptr<torch::nn::Module>(const ModelSpec&)>;

struct ParameterCountCase {
  std::string label;
  Family family;
  std::map<std::string, int64_t> hf;  // HF num_parameters() on the meta device, transformers 5.24.0
  bool whole_family;                  // these are all the catalog's models of the family
  BuildOnMeta build;
  std::string tied;  // a parameter that must not exist (tied weights), or ""
};

void PrintTo(const ParameterCountCase& c, std::ostream* out) {
  *out << c.label;
}

class ParameterCount : public testing::TestWithParam<ParameterCountCase> {};

TEST_P(ParameterCount, FullSizeOnTheMetaDeviceEqualsHuggingFaceAndPlanner) {
  const ParameterCountCase& c = GetParam();
  const Catalog catalog = Catalog::load({});
  for (const auto& [name, hf_count] : c.hf) {
    const ModelSpec& spec = catalog.model(name);
    ASSERT_EQ(spec.family, c.family) << name;
    const std::shared_ptr<torch::nn::Module> model = c.build(spec);
    for (const at::Tensor& p : model->parameters()) ASSERT_TRUE(p.is_meta()) << name;
    EXPECT_EQ(count_parameters(*model), hf_count) << name;
    EXPECT_EQ(count_parameters(*model), count_params(spec).total) << name;
    if (!c.tied.empty()) {
      EXPECT_FALSE(model->named_parameters().contains(c.tied)) << "tied";
    }
  }
  if (c.whole_family) {
    const auto& models = catalog.models();
    EXPECT_EQ(
        std::count_if(
            models.begin(), models.end(), [&](const ModelSpec& s) { return s.family == c.family; }),
        static_cast<std::ptrdiff_t>(c.hf.size()));
  }
}

// Model(options(spec, on the meta device)): shapes without storage.
template <typename Model, typename Options>
BuildOnMeta on_meta(Options options) {
  return [options](const ModelSpec& spec) {
    return Model(options(spec, at::TensorOptions().device(at::kMeta))).ptr();
  };
}

INSTANTIATE_TEST_SUITE_P(
    Catalog,
    ParameterCount,
    testing::Values(
        // GPTNeoXForCausalLM for each Pythia configuration.
        ParameterCountCase{"gpt_neox",
                           Family::kGptNeox,
                           {{"pythia-14m", 14067712},
                            {"pythia-31m", 30494720},
                            {"pythia-70m", 70426624},
                            {"pythia-160m", 162322944},
                            {"pythia-410m", 405334016},
                            {"pythia-1b", 1011781632},
                            {"pythia-1.4b", 1414647808},
                            {"pythia-2.8b", 2775208960},
                            {"pythia-6.9b", 6857302016},
                            {"pythia-12b", 11846072320}},
                           /*whole_family=*/true,
                           on_meta<GptNeoxForCausalLM>(gpt_neox_options),
                           ""},
        // RobertaForMaskedLM(roberta-large); the decoder is tied to the word embeddings.
        ParameterCountCase{"roberta",
                           Family::kRoberta,
                           {{"roberta", 355412057}},
                           /*whole_family=*/false,
                           on_meta<RobertaForMaskedLM>(roberta_options),
                           "lm_head.decoder.weight"},
        // ViTForImageClassification for ViT-L/16 with 21841 labels.
        ParameterCountCase{"vit",
                           Family::kVit,
                           {{"vit", 325688657}},
                           /*whole_family=*/false,
                           on_meta<VitForImageClassification>(vit_options),
                           ""},
        // ConvNextForImageClassification for every catalog ConvNeXt.
        ParameterCountCase{"convnext",
                           Family::kConvnext,
                           {{"convnext-large-1k", 197767336},
                            {"convnext-large-22k", 229799953},
                            {"convnext-xlarge-22k", 392900177}},
                           /*whole_family=*/true,
                           on_meta<ConvnextForImageClassification>(convnext_options),
                           ""},
        // MambaForCausalLM for state-spaces/mamba-2.8b-hf's configuration.
        ParameterCountCase{"mamba",
                           Family::kMamba,
                           {{"mamba", 2768345600}},
                           /*whole_family=*/false,
                           on_meta<MambaForCausalLM>(mamba_options),
                           ""},
        // LlamaForCausalLM for TinyLlama-1.1B's configuration (grouped-query, untied).
        ParameterCountCase{"llama",
                           Family::kLlama,
                           {{"tinyllama-1.1b", 1100048384}},
                           /*whole_family=*/false,
                           on_meta<LlamaForCausalLM>(llama_options),
                           ""}),
    case_label);

// ---- Finite differences -----------------------------------------------------------------------

struct LossSetup {
  std::shared_ptr<torch::nn::Module> module;
  std::function<at::Tensor()> loss;
};

struct FiniteDifferenceCase {
  std::string label;
  std::function<LossSetup()> setup;  // fp64 model and a fixed batch
};

void PrintTo(const FiniteDifferenceCase& c, std::ostream* out) {
  *out << c.label;
}

class FiniteDifferences : public testing::TestWithParam<FiniteDifferenceCase> {};

// Directional central differences in fp64 (h = 1e-6, error O(h^2)), one random direction per
// parameter tensor: (L(p + h v) - L(p - h v)) / 2h must equal <dL/dp, v>.
TEST_P(FiniteDifferences, GradientsMatchInDouble) {
  const LossSetup s = GetParam().setup();
  double worst = 0;
  for (const test::FiniteDifference& d : test::finite_differences(*s.module, s.loss, 1e-6)) {
    EXPECT_LT(d.error, 1e-7) << d.name << ": numeric " << d.numeric << ", analytic " << d.analytic;
    worst = std::max(worst, d.error);
  }
  std::cout << "[finite differences] " << GetParam().label << ": worst error " << worst << "\n";
}

LossSetup causal_lm_setup(std::shared_ptr<torch::nn::Module> module,
                          std::function<at::Tensor(const at::Tensor&)> forward,
                          const at::Tensor& tokens) {
  return {std::move(module), [forward, tokens] { return causal_lm_loss(forward(tokens), tokens); }};
}

LossSetup gpt_neox_fd() {
  GptNeoxForCausalLM model = test::tiny_gpt_neox(at::kDouble);
  return causal_lm_setup(
      model.ptr(),
      [model = model.ptr()](const at::Tensor& t) { return model->forward(t); },
      at::randint(96, {2, 8}));
}

LossSetup llama_fd(const std::string& name) {
  LlamaForCausalLM model = test::tiny_llama(name, at::kDouble);
  return causal_lm_setup(
      model.ptr(),
      [model = model.ptr()](const at::Tensor& t) { return model->forward(t); },
      at::randint(96, {2, 8}));
}

LossSetup mamba_fd(ScanKind scan) {
  MambaForCausalLM model = test::tiny_mamba(at::kDouble, scan);
  return causal_lm_setup(
      model.ptr(),
      [model = model.ptr()](const at::Tensor& t) { return model->forward(t); },
      at::randint(96, {2, 12}));
}

LossSetup roberta_fd() {
  RobertaForMaskedLM model = test::tiny_roberta(at::kDouble);
  const at::Tensor tokens = at::randint(4, 95, {2, 8});  // ordinary tokens
  const MlmBatch batch = mask_tokens(
      tokens, {.probability = 0.5, .mask_token_id = 95, .vocab_size = 96, .special_token_ids = {}});
  return {model.ptr(), [model = model.ptr(), batch] {
            return masked_lm_loss(model->forward(batch.inputs), batch.labels);
          }};
}

template <typename Model>
LossSetup image_fd(Model model, int64_t image_size) {
  model->eval();
  const at::Tensor images =
      at::randn({2, 3, image_size, image_size}, at::TensorOptions().dtype(at::kDouble));
  const at::Tensor labels = at::tensor({3, 7}, at::kLong);
  return {model.ptr(), [model = model.ptr(), images, labels] {
            return classification_loss(model->forward(images), labels);
          }};
}

LossSetup convnext_fd() {
  ConvnextOptions options = test::tiny_convnext_options(at::kDouble);
  options.layer_scale_init = 0.5;  // blocks contribute visibly (1e-6 would hide their errors)
  torch::manual_seed(0);
  return image_fd(ConvnextForImageClassification(options), 64);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    FiniteDifferences,
    testing::Values(FiniteDifferenceCase{"gpt_neox", gpt_neox_fd},
                    FiniteDifferenceCase{"roberta", roberta_fd},
                    FiniteDifferenceCase{"vit",
                                         [] { return image_fd(test::tiny_vit(at::kDouble), 16); }},
                    FiniteDifferenceCase{"convnext", convnext_fd},
                    FiniteDifferenceCase{"mamba_plain", [] { return mamba_fd(ScanKind::kPlain); }},
                    FiniteDifferenceCase{"mamba_fused", [] { return mamba_fd(ScanKind::kFused); }},
                    FiniteDifferenceCase{"llama", [] { return llama_fd("tiny-llama"); }},
                    FiniteDifferenceCase{"qwen2", [] { return llama_fd("tiny-qwen2"); }},
                    FiniteDifferenceCase{"olmo", [] { return llama_fd("tiny-olmo"); }}),
    case_label);

// ---- A loss that falls on a synthetic task ----------------------------------------------------

struct TrainSetup {
  LossSetup loss;
  at::Tensor input;  // the fixed batch's tokens or images
};

struct SyntheticTaskCase {
  std::string label;
  std::function<TrainSetup()> setup;
  std::vector<int64_t> input_shape;
  double classes;  // vocabulary or labels: an untrained model's loss is near log(classes)
  test::FixedBatchOptimizer optimizer;
};

void PrintTo(const SyntheticTaskCase& c, std::ostream* out) {
  *out << c.label;
}

class SyntheticTask : public testing::TestWithParam<SyntheticTaskCase> {};

// Causal LMs: each sequence counts upwards modulo the vocabulary from a random start, so every next
// token is predictable from the current one. Images: random images with random labels (the zoo's
// synthetic batch, as the reference benchmarks), learnable by memorising a fixed batch of 8; ViT's
// dropout is on (training mode). 40 steps at lr 3e-3. (RoBERTa's masked task is in roberta_test.)
TEST_P(SyntheticTask, LossFalls) {
  const SyntheticTaskCase& c = GetParam();
  const TrainSetup s = c.setup();
  ASSERT_EQ(s.input.sizes(), at::IntArrayRef(c.input_shape));
  const auto [first, last] =
      test::train_fixed_batch(*s.loss.module, s.loss.loss, /*steps=*/40, /*lr=*/3e-3, c.optimizer);
  EXPECT_NEAR(first, std::log(c.classes), 0.5) << "an untrained model is near-uniform";
  EXPECT_LT(last, 0.2 * first);
  std::cout << "[synthetic task] " << c.label << " loss " << first << " -> " << last
            << " in 40 steps\n";
}

SyntheticOptions batch_of(int64_t batch_size) {
  SyntheticOptions options;
  options.batch_size = batch_size;
  return options;
}

at::Tensor counting_tokens(int64_t seq_len) {
  const at::Tensor starts = at::randint(96, {8, 1});
  return (starts + at::arange(seq_len).view({1, seq_len})).remainder(96);
}

TrainSetup gpt_neox_task() {
  GptNeoxForCausalLM model = test::tiny_gpt_neox();
  const at::Tensor tokens = counting_tokens(16);
  return {causal_lm_setup(
              model.ptr(),
              [model = model.ptr()](const at::Tensor& t) { return model->forward(t); },
              tokens),
          tokens};
}

TrainSetup llama_task() {
  LlamaForCausalLM model = test::tiny_llama();
  const at::Tensor tokens = counting_tokens(16);
  return {causal_lm_setup(
              model.ptr(),
              [model = model.ptr()](const at::Tensor& t) { return model->forward(t); },
              tokens),
          tokens};
}

TrainSetup mamba_task() {
  MambaForCausalLM model = test::tiny_mamba(at::kFloat, ScanKind::kFused);
  const at::Tensor tokens = counting_tokens(24);
  return {causal_lm_setup(
              model.ptr(),
              [model = model.ptr()](const at::Tensor& t) { return model->forward(t); },
              tokens),
          tokens};
}

template <typename Model>
TrainSetup image_task(const std::string& spec_name, Model model) {
  const Batch batch = synthetic_batch(test::tiny_spec(spec_name), batch_of(8));
  return {{model.ptr(),
           [model = model.ptr(), batch] {
             return classification_loss(model->forward(batch.pixel_values), batch.labels);
           }},
          batch.pixel_values};
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    SyntheticTask,
    testing::Values(
        SyntheticTaskCase{"gpt_neox", gpt_neox_task, {8, 16}, 96, test::FixedBatchOptimizer::kAdam},
        SyntheticTaskCase{"llama", llama_task, {8, 16}, 96, test::FixedBatchOptimizer::kAdam},
        SyntheticTaskCase{"mamba_fused",
                          mamba_task,
                          {8, 24},
                          96,
                          test::FixedBatchOptimizer::kAdamWithoutWeightDecay},
        SyntheticTaskCase{"vit",
                          [] { return image_task("tiny-vit", test::tiny_vit()); },
                          {8, 3, 16, 16},
                          10,
                          test::FixedBatchOptimizer::kAdam},
        SyntheticTaskCase{"convnext",
                          [] { return image_task("tiny-convnext", test::tiny_convnext()); },
                          {8, 3, 64, 64},
                          10,
                          test::FixedBatchOptimizer::kAdam}),
    case_label);

// ---- A training step through the zoo ----------------------------------------------------------

struct ZooStepCase {
  std::string label;
  std::string spec;  // tests/models/data/<spec>.toml
  ZooOptions options;
};

void PrintTo(const ZooStepCase& c, std::ostream* out) {
  *out << c.label;
}

class ZooStep : public testing::TestWithParam<ZooStepCase> {};

// Through the zoo's one interface (as the benchmark and the trainer drive it): a synthetic batch
// of 3 gives [B, T, V] (text) or [B, num_labels] (vision) logits, a scalar near-uniform loss, and
// every gradient defined and finite.
TEST_P(ZooStep, TakesATrainingStepThroughTheInterface) {
  const ModelSpec spec = test::tiny_spec(GetParam().spec);
  torch::manual_seed(0);
  ZooModel model = make_model(spec, GetParam().options);
  const Batch batch = synthetic_batch(spec, batch_of(3));
  const at::Tensor logits = model.logits(batch);
  const bool vision = spec.family == Family::kVit || spec.family == Family::kConvnext;
  const int64_t classes = vision ? spec.arch.num_labels : spec.arch.vocab_size;
  const std::vector<int64_t> expected = vision
                                            ? std::vector<int64_t>{3, classes}
                                            : std::vector<int64_t>{3, spec.arch.seq_len, classes};
  EXPECT_EQ(logits.sizes().vec(), expected);
  const at::Tensor loss = model.loss(logits, batch);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item<double>(), std::log(static_cast<double>(classes)), 0.5)
      << "an untrained model is near-uniform";
  loss.backward();
  for (const auto& p : model.module().named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    ZooStep,
    testing::Values(
        ZooStepCase{
            "gpt_neox", "tiny-gpt-neox", {.attention = AttentionKind::kFused, .param_options = {}}},
        ZooStepCase{
            "roberta", "tiny-roberta", {.attention = AttentionKind::kFused, .param_options = {}}},
        ZooStepCase{"vit", "tiny-vit", {.attention = AttentionKind::kFused, .param_options = {}}},
        ZooStepCase{
            "convnext", "tiny-convnext", {.attention = AttentionKind::kFused, .param_options = {}}},
        ZooStepCase{"mamba_plain", "tiny-mamba", {.param_options = {}, .scan = ScanKind::kPlain}},
        ZooStepCase{"mamba_fused", "tiny-mamba", {.param_options = {}, .scan = ScanKind::kFused}},
        ZooStepCase{
            "llama", "tiny-llama", {.attention = AttentionKind::kFused, .param_options = {}}},
        ZooStepCase{
            "qwen2", "tiny-qwen2", {.attention = AttentionKind::kFused, .param_options = {}}},
        ZooStepCase{
            "olmo", "tiny-olmo", {.attention = AttentionKind::kFused, .param_options = {}}}),
    case_label);

}  // namespace
}  // namespace gpudays::models
