// ConvNeXt tests: drop path in training only, checkpoint mismatches, the export to transformers.
// Parity is in parity_test.cpp, parameter names in family_names_test.cpp; parameter counts, finite
// differences, the synthetic task, the zoo step, bad specs and config.json in family_test.cpp and
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
