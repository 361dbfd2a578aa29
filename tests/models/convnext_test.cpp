// ConvNeXt tests: HF parameter names and shapes, drop path, checkpoint mismatches and the export
// to transformers. Parity is in parity_test.cpp; parameter counts, finite differences, the
// synthetic task, the zoo step, bad specs and config.json in family_test.cpp and
// family_behaviour_test.cpp.
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include "models/checkpoint.h"
#include "models/convnext.h"
#include "models/safetensors.h"
#include "family_test_util.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

TEST(Convnext, ParameterNamesAndShapesAreHuggingFaces) {
  ConvnextForImageClassification model = test::tiny_convnext();
  const auto params = model->named_parameters();
  // stem 4, 9 per block x 6 blocks, 4 per downsampling x 3, final norm 2, classifier 2
  EXPECT_EQ(params.size(), 4 + 9 * 6 + 4 * 3 + 2 + 2u);
  const auto shape = [&](const char* name) { return params[name].sizes().vec(); };
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(shape("convnext.embeddings.patch_embeddings.weight"), (Shape{8, 3, 4, 4}));
  EXPECT_EQ(shape("convnext.embeddings.layernorm.bias"), (Shape{8}));
  EXPECT_EQ(shape("convnext.encoder.stages.0.layers.1.dwconv.weight"), (Shape{8, 1, 7, 7}));
  EXPECT_EQ(shape("convnext.encoder.stages.2.layers.0.layernorm.weight"), (Shape{24}));
  EXPECT_EQ(shape("convnext.encoder.stages.2.layers.1.pwconv1.weight"), (Shape{96, 24}));
  EXPECT_EQ(shape("convnext.encoder.stages.2.layers.1.pwconv2.bias"), (Shape{24}));
  EXPECT_EQ(shape("convnext.encoder.stages.3.layers.0.layer_scale_parameter"), (Shape{32}));
  EXPECT_EQ(shape("convnext.encoder.stages.1.downsampling_layer.0.weight"), (Shape{8}));
  EXPECT_EQ(shape("convnext.encoder.stages.1.downsampling_layer.1.weight"), (Shape{16, 8, 2, 2}));
  EXPECT_EQ(shape("convnext.layernorm.weight"), (Shape{32}));
  EXPECT_EQ(shape("classifier.weight"), (Shape{10, 32}));
  EXPECT_EQ(params.find("convnext.encoder.stages.0.downsampling_layer.0.weight"), nullptr);
  EXPECT_EQ(model->forward(at::randn({3, 3, 64, 64})).sizes(), (at::IntArrayRef{3, 10}));
}

TEST(Convnext, DropPathActsInTrainingOnly) {
  ConvnextOptions options = test::tiny_convnext_options();
  options.drop_path_rate = 0.5;
  options.layer_scale_init = 1.0;  // make the dropped branches matter
  torch::manual_seed(0);
  ConvnextForImageClassification model(options);
  const at::Tensor images = at::randn({4, 3, 64, 64});
  EXPECT_FALSE(at::allclose(model->forward(images), model->forward(images)));
  model->eval();
  EXPECT_TRUE(at::allclose(model->forward(images), model->forward(images), 0, 0));
}

// A model saved here loads with ConvNextForImageClassification.from_pretrained, same logits.
TEST(ConvnextExport, SavedCheckpointLoadsInTransformers) {
  ConvnextOptions options = test::tiny_convnext_options();
  options.layer_scale_init = 0.5;  // so that every block shows in the logits
  torch::manual_seed(0);
  ConvnextForImageClassification model(options);
  EXPECT_TRUE(test::loads_in_transformers(*model,
                                          test::classifier_of(model),
                                          test::tiny_spec("tiny-convnext"),
                                          at::randn({2, 3, 64, 64}),
                                          /*tolerance=*/1e-5));
}

TEST(Convnext, CheckpointMismatchesAreListedAndNothingIsLoaded) {
  ConvnextForImageClassification model = test::tiny_convnext();
  const std::string path = test::scratch_dir("convnext-ckpt") + "/model.safetensors";
  save_safetensors(*model, path);
  ConvnextOptions options = test::tiny_convnext_options();
  options.depths = {2, 1, 3, 1};     // one more block in stage 2
  options.hidden_sizes.back() = 40;  // wider last stage
  ConvnextForImageClassification target(options);
  const at::Tensor before = target->named_parameters()["classifier.weight"].clone();
  const std::string error = test::error_of([&] { load_safetensors(*target, path); });
  EXPECT_NE(error.find("missing [convnext.encoder.stages.2.layers.2."), std::string::npos) << error;
  EXPECT_NE(error.find("convnext.encoder.stages.2.layers.2.dwconv.weight,"), std::string::npos)
      << error;
  EXPECT_NE(error.find("convnext.encoder.stages.3.downsampling_layer.1.weight is [32, 24, 2, 2], "
                       "model needs [40, 24, 2, 2]"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("classifier.weight is [10, 32], model needs [10, 40]"), std::string::npos)
      << error;
  EXPECT_TRUE(at::equal(before, target->named_parameters()["classifier.weight"]));
}

}  // namespace
}  // namespace gpudays::models
