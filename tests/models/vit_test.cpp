// ViT tests: dropout in training only, checkpoint mismatches, the export to transformers. Parity is
// in parity_test.cpp, parameter names in family_names_test.cpp; the parameter count, plain vs
// fused, finite differences, the synthetic task, the zoo step, bad specs and config.json in
// family_test.cpp and family_behaviour_test.cpp.
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
