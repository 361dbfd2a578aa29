// The HF config fields the models take from the catalog rather than hard-coding (docs/catalog.md):
// each reaches its model (init std, rotary base, special ids, attention dropout, drop path, layer
// scale, Mamba's time-step init) and the exported config.json under transformers' key name.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "catalog/model_spec.h"
#include "models/convnext.h"
#include "models/gpt_neox.h"
#include "models/hf_export.h"
#include "models/mamba.h"
#include "models/roberta.h"
#include "models/vit.h"
#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

at::Tensor parameter(torch::nn::Module& module, const std::string& name) {
  const auto params = module.named_parameters();
  EXPECT_TRUE(params.contains(name)) << name;
  return params[name];
}

// Std of a large weight initialised from N(0, initializer_range), within 5% of it.
void expect_init_std(const ModelSpec& spec, const std::string& weight) {
  torch::manual_seed(0);
  ZooModel model = make_model(spec, {});
  const double std = parameter(model.module(), weight).std().item<double>();
  EXPECT_NEAR(std, spec.arch.initializer_range, 0.05 * spec.arch.initializer_range)
      << spec.name << ": " << weight;
}

TEST(ConfigFields, InitializerRangeReachesTheWeights) {
  ModelSpec neox = test::tiny_spec("tiny-gpt-neox");
  neox.arch.initializer_range = 0.2;
  expect_init_std(neox, "gpt_neox.layers.0.mlp.dense_h_to_4h.weight");
  expect_init_std(neox, "gpt_neox.embed_in.weight");
  ModelSpec roberta = test::tiny_spec("tiny-roberta");
  roberta.arch.initializer_range = 0.2;
  expect_init_std(roberta, "roberta.encoder.layer.0.intermediate.dense.weight");
  ModelSpec vit = test::tiny_spec("tiny-vit");
  vit.arch.initializer_range = 0.2;
  expect_init_std(vit, "vit.encoder.layer.0.intermediate.dense.weight");
  ModelSpec convnext = test::tiny_spec("tiny-convnext");
  convnext.arch.initializer_range = 0.2;
  expect_init_std(convnext, "convnext.encoder.stages.3.layers.0.pwconv1.weight");
  ModelSpec mamba = test::tiny_spec("tiny-mamba");
  EXPECT_EQ(mamba.arch.initializer_range, 0.1);  // MambaConfig's default
  mamba.arch.initializer_range = 0.3;
  expect_init_std(mamba, "backbone.embeddings.weight");
  expect_init_std(mamba, "backbone.layers.0.mixer.in_proj.weight");
}

TEST(ConfigFields, RotaryBaseChangesTheTables) {
  ModelSpec spec = test::tiny_spec("tiny-gpt-neox");
  const GptNeoxOptions base = gpt_neox_options(spec, {});
  EXPECT_EQ(base.rotary_base, kGptNeoxRotaryBase);
  spec.arch.rotary_emb_base = 500000.0;
  const GptNeoxOptions changed = gpt_neox_options(spec, {});
  EXPECT_EQ(changed.rotary_base, 500000.0);
  const at::Tensor like = at::randn({1});
  EXPECT_FALSE(at::allclose(rotary_tables(base, 8, like).cos, rotary_tables(changed, 8, like).cos));
}

TEST(ConfigFields, RobertaSpecialIdsAreNeverMaskedOrDrawn) {
  ModelSpec spec = test::tiny_spec("tiny-roberta");
  spec.arch.bos_token_id = 5;
  spec.arch.eos_token_id = 7;
  const MlmOptions mlm = roberta_mlm_options(spec);
  for (const int64_t id : {int64_t{5}, int64_t{1}, int64_t{7}, kRobertaUnkId, int64_t{95}}) {
    EXPECT_NE(std::find(mlm.special_token_ids.begin(), mlm.special_token_ids.end(), id),
              mlm.special_token_ids.end())
        << id;
  }
  const Batch batch = synthetic_batch(
      spec, {.batch_size = 8, .generator = at::make_generator<at::CPUGeneratorImpl>(3)});
  const at::Tensor selected = batch.labels.ne(-100);
  ASSERT_TRUE(selected.any().item<bool>());
  // The labels are the original tokens: ordinary ids above every special one, below <mask>.
  EXPECT_TRUE(batch.labels.masked_select(selected).ge(8).all().item<bool>());
  EXPECT_TRUE(batch.labels.masked_select(selected).lt(95).all().item<bool>());
}

TEST(ConfigFields, VitAttentionDropoutIsSeparate) {
  ModelSpec spec = test::tiny_spec("tiny-vit");
  spec.recipe.dropout = 0.0;
  spec.arch.attention_probs_dropout_prob = 0.5;
  const VitOptions options = vit_options(spec, {});
  EXPECT_EQ(options.hidden_dropout, 0.0);
  EXPECT_EQ(options.attention_dropout, 0.5);
  torch::manual_seed(0);
  VitForImageClassification model(options);
  const at::Tensor images = at::randn({2, 3, 16, 16});
  EXPECT_FALSE(at::allclose(model->forward(images), model->forward(images)));
  model->eval();
  EXPECT_TRUE(at::equal(model->forward(images), model->forward(images)));
}

TEST(ConfigFields, ConvnextLayerScaleIsTheCatalogs) {
  ModelSpec spec = test::tiny_spec("tiny-convnext");
  spec.arch.layer_scale_init_value = 0.25;
  ConvnextForImageClassification model(convnext_options(spec, {}));
  const at::Tensor scale =
      parameter(*model, "convnext.encoder.stages.0.layers.0.layer_scale_parameter");
  EXPECT_TRUE(at::equal(scale, at::full_like(scale, 0.25)));
}

// Drop path from the catalog: the same weights give other training-mode logits at rate 0.5, and
// the very same eval-mode logits as at rate 0 (where training mode is deterministic too).
TEST(ConfigFields, ConvnextDropPathActsInTrainingOnly) {
  ModelSpec spec = test::tiny_spec("tiny-convnext");
  spec.arch.layer_scale_init_value = 1.0;  // make the dropped branches matter
  torch::manual_seed(0);
  ConvnextForImageClassification plain(convnext_options(spec, {}));
  spec.arch.drop_path_rate = 0.5;
  torch::manual_seed(0);
  ConvnextForImageClassification dropping(convnext_options(spec, {}));
  const at::Tensor images = at::randn({4, 3, 64, 64});
  const at::Tensor train_plain = plain->forward(images);
  EXPECT_TRUE(at::equal(train_plain, plain->forward(images)));  // rate 0: a no-op
  EXPECT_FALSE(at::allclose(dropping->forward(images), train_plain));
  plain->eval();
  dropping->eval();
  EXPECT_TRUE(at::equal(plain->forward(images), train_plain));
  EXPECT_TRUE(at::equal(dropping->forward(images), plain->forward(images)));
}

// With time_step_min = time_step_max and no floor every dt is that value: dt_proj.bias is its
// inverse softplus; the weight's bound is time_step_scale / sqrt(dt_rank).
TEST(ConfigFields, MambaTimeStepInit) {
  ModelSpec spec = test::tiny_spec("tiny-mamba");
  spec.arch.time_step_min = 0.05;
  spec.arch.time_step_max = 0.05;
  spec.arch.time_step_floor = 0.0;
  spec.arch.time_step_scale = 4.0;
  torch::manual_seed(0);
  MambaForCausalLM model(mamba_options(spec, {}));
  const at::Tensor bias = parameter(*model, "backbone.layers.0.mixer.dt_proj.bias");
  const double dt = 0.05;
  const double expected = dt + std::log(-std::expm1(-dt));
  EXPECT_TRUE(at::allclose(bias, at::full_like(bias, expected), /*rtol=*/1e-5, /*atol=*/1e-6));
  const at::Tensor weight = parameter(*model, "backbone.layers.0.mixer.dt_proj.weight");
  const double bound = 4.0 / std::sqrt(static_cast<double>(spec.arch.dt_rank));
  EXPECT_LE(weight.abs().max().item<double>(), bound);
  EXPECT_GT(weight.abs().max().item<double>(), 0.5 * bound);  // not the default 1 / sqrt(rank)
}

TEST(ConfigFields, ExportedConfigCarriesThem) {
  ModelSpec neox = test::tiny_spec("tiny-gpt-neox");
  neox.arch.rotary_emb_base = 500000.0;
  neox.arch.initializer_range = 0.01;
  const nlohmann::json n = hf_config_json(neox);
  EXPECT_EQ(n.at("rotary_emb_base"), 500000.0);
  EXPECT_EQ(n.at("rope_parameters").at("rope_theta"), 500000.0);
  EXPECT_EQ(n.at("initializer_range"), 0.01);

  ModelSpec roberta = test::tiny_spec("tiny-roberta");
  roberta.arch.pad_token_id = 3;
  roberta.arch.bos_token_id = 5;
  roberta.arch.eos_token_id = 6;
  roberta.arch.initializer_range = 0.03;
  const nlohmann::json r = hf_config_json(roberta);
  EXPECT_EQ(r.at("pad_token_id"), 3);
  EXPECT_EQ(r.at("bos_token_id"), 5);
  EXPECT_EQ(r.at("eos_token_id"), 6);
  EXPECT_EQ(r.at("initializer_range"), 0.03);

  ModelSpec vit = test::tiny_spec("tiny-vit");
  vit.arch.attention_probs_dropout_prob = 0.2;
  const nlohmann::json v = hf_config_json(vit);
  EXPECT_EQ(v.at("attention_probs_dropout_prob"), 0.2);
  EXPECT_EQ(v.at("hidden_dropout_prob"), vit.recipe.dropout);

  ModelSpec convnext = test::tiny_spec("tiny-convnext");
  convnext.arch.drop_path_rate = 0.3;
  convnext.arch.layer_scale_init_value = 0.5;
  const nlohmann::json c = hf_config_json(convnext);
  EXPECT_EQ(c.at("drop_path_rate"), 0.3);
  EXPECT_EQ(c.at("layer_scale_init_value"), 0.5);

  ModelSpec mamba = test::tiny_spec("tiny-mamba");
  mamba.arch.time_step_min = 0.002;
  mamba.arch.time_step_max = 0.2;
  mamba.arch.time_step_floor = 0.0;
  mamba.arch.time_step_scale = 2.0;
  const nlohmann::json m = hf_config_json(mamba);
  EXPECT_EQ(m.at("initializer_range"), 0.1);
  EXPECT_EQ(m.at("time_step_min"), 0.002);
  EXPECT_EQ(m.at("time_step_max"), 0.2);
  EXPECT_EQ(m.at("time_step_floor"), 0.0);
  EXPECT_EQ(m.at("time_step_scale"), 2.0);
}

}  // namespace
}  // namespace gpudays::models
