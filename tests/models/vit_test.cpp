// ViT tests: HF parameter names and shapes, dropout, checkpoint mismatches, export. Parity is in
// parity_test.cpp; parameter count, plain vs fused, finite differences, the synthetic task, the
// zoo step, bad specs and config.json in family_test.cpp and family_behaviour_test.cpp.
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "models/checkpoint.h"
#include "models/hf_export.h"
#include "models/safetensors.h"
#include "models/vit.h"
#include "family_test_util.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

TEST(Vit, ParameterNamesAndShapesAreHuggingFaces) {
  VitForImageClassification model = test::tiny_vit();
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), 4 + 2 * 16 + 2 + 2u);  // embeddings, 16 per layer, final norm, head
  const auto shape = [&](const char* name) { return params[name].sizes().vec(); };
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(shape("vit.embeddings.cls_token"), (Shape{1, 1, 32}));
  EXPECT_EQ(shape("vit.embeddings.position_embeddings"), (Shape{1, 17, 32}));
  EXPECT_EQ(shape("vit.embeddings.patch_embeddings.projection.weight"), (Shape{32, 3, 4, 4}));
  EXPECT_EQ(shape("vit.encoder.layer.1.attention.attention.query.weight"), (Shape{32, 32}));
  EXPECT_EQ(shape("vit.encoder.layer.1.attention.attention.value.bias"), (Shape{32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.attention.output.dense.weight"), (Shape{32, 32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.intermediate.dense.weight"), (Shape{64, 32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.output.dense.weight"), (Shape{32, 64}));
  EXPECT_EQ(shape("vit.encoder.layer.0.layernorm_before.weight"), (Shape{32}));
  EXPECT_EQ(shape("vit.encoder.layer.0.layernorm_after.bias"), (Shape{32}));
  EXPECT_EQ(shape("vit.layernorm.weight"), (Shape{32}));
  EXPECT_EQ(shape("classifier.weight"), (Shape{10, 32}));
  EXPECT_EQ(model->forward(at::randn({3, 3, 16, 16})).sizes(), (at::IntArrayRef{3, 10}));
}

TEST(Vit, DropoutActsInTrainingOnly) {
  VitForImageClassification model = test::tiny_vit();  // recipe dropout 0.1
  const at::Tensor images = at::randn({2, 3, 16, 16});
  EXPECT_FALSE(at::allclose(model->forward(images), model->forward(images)));
  model->eval();
  EXPECT_TRUE(at::allclose(model->forward(images), model->forward(images), 0, 0));
}

// A model saved here loads with ViTForImageClassification.from_pretrained and gives our logits.
TEST(VitExport, SavedCheckpointLoadsInTransformers) {
  VitForImageClassification model = test::tiny_vit();
  EXPECT_TRUE(test::loads_in_transformers(*model,
                                          test::classifier_of(model),
                                          test::tiny_spec("tiny-vit"),
                                          at::randn({2, 3, 16, 16}),
                                          /*tolerance=*/1e-5));
}

TEST(Vit, CheckpointMismatchesAreListedAndNothingIsLoaded) {
  VitForImageClassification model = test::tiny_vit();
  const std::string path = test::scratch_dir("vit-ckpt") + "/model.safetensors";
  NamedTensors state = named_state(*model);
  state.erase(std::find_if(state.begin(), state.end(), [](const auto& t) {
    return t.first == "vit.embeddings.cls_token";
  }));
  state.emplace_back("vit.pooler.dense.bias", at::randn({32}));
  write_safetensors(path, state);
  ModelSpec other = test::tiny_spec("tiny-vit");
  other.arch.num_labels = 12;
  VitForImageClassification target(vit_options(other, at::TensorOptions()));
  const at::Tensor before = target->named_parameters()["classifier.weight"].clone();
  const std::string error = test::error_of([&] { load_safetensors(*target, path); });
  EXPECT_NE(error.find("missing [vit.embeddings.cls_token]"), std::string::npos) << error;
  EXPECT_NE(error.find("unexpected [vit.pooler.dense.bias]"), std::string::npos) << error;
  EXPECT_NE(error.find("classifier.weight is [10, 32], model needs [12, 32]"), std::string::npos)
      << error;
  EXPECT_NE(error.find("classifier.bias is [10]"), std::string::npos) << error;
  EXPECT_TRUE(at::equal(before, target->named_parameters()["classifier.weight"]));
}

}  // namespace
}  // namespace gpudays::models
